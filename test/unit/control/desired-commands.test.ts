/**
 * `desired set` over the memory admin store: setting a selector's desired version again (as an
 * operator does to resume a halted convergence) keeps the guard rails the campaign that set it
 * carried; a new selector has none.
 */
import { describe, expect, it } from "vitest";
import { setDesired } from "../../../control/admin/desired-commands.js";
import {
  type DesiredVersion,
  desiredOfCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { windowsOf } from "../campaign/windows-of.js";

const T0 = Date.UTC(2031, 0, 1);
const actor = { name: "alice", ip: "10.0.0.9" };
const RELEASE = { version: "2.0.0", sequence: 2, expiresAt: undefined, platforms: undefined };

function world() {
  const store = new MemoryCampaignStore(new ManualClock(T0));
  const fleet = new MemoryFleetStore(store);
  const deps = {
    fleet,
    release: async (v: string) => (v === "2.0.0" ? RELEASE : undefined),
    policy: { reconnectTimeoutMs: 600_000, configGraceMs: 60_000 },
  };
  const set = (pools: string[]) =>
    setDesired(deps, {
      targetVersion: "2.0.0",
      selector: { labels: {}, pools, nodeIds: [] },
      exclude: { nodeIds: [], tags: {} },
      maxFailures: undefined,
      disruptionBudgetPercent: undefined,
      reason: "",
      actor,
      now: new Date(T0 + 5000),
    });
  return { fleet, set };
}

describe("desired set keeps the guard rails of the desired version it replaces", () => {
  it("setting a halted desired version of pool prod again keeps its campaign's Saturday window", async () => {
    const { fleet, set } = world();
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["prod"] },
      windows: windowsOf("Sat 02:00-04:00 UTC"),
      maxDownloads: 3,
    });
    const recorded: DesiredVersion = {
      ...desiredOfCampaign({ campaignId: "c1", spec, target: RELEASE, finishedAt: T0 }),
      haltedAt: T0 + 1000,
      haltedReason: "burst",
    };
    fleet.tables.desired.set(recorded.id, recorded);
    const { desired } = await set(["prod"]);
    expect(desired.id).toBe(recorded.id);
    expect(desired.haltedAt).toBeUndefined();
    expect(desired.settings.guardRails).toEqual(recorded.settings.guardRails);
    expect(desired.settings.guardRails?.windows).toEqual(windowsOf("Sat 02:00-04:00 UTC"));
  });

  it("a selector no campaign set has no guard rails", async () => {
    const { set } = world();
    const { desired } = await set(["edge"]);
    expect(desired.settings.guardRails).toBeUndefined();
  });
});
