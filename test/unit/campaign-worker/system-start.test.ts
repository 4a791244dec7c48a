/**
 * The leader's own starts (a plan's group, a convergence campaign) on the memory stores: they
 * are held to the same admission as an administrator's start — the configured canary share,
 * the policy's step limit, the release's platforms — and write nothing when refused.
 */
import { describe, expect, it } from "vitest";
import {
  type CampaignSpec,
  DEFAULT_POLICY,
  type FleetNode,
  type Policy,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import { startSystemCampaign } from "../../../control/campaign-worker/system-start.js";
import { ManualClock } from "../../../control/manual-clock.js";

const T0 = Date.UTC(2031, 0, 1);
const MIN = 60_000;

function node(id: string, over: Partial<FleetNode> = {}): FleetNode {
  return {
    id,
    labels: {},
    pool: "p",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
    platform: "linux-amd64",
    online: true,
    confirmedSequence: 1,
    runningSequence: 1,
    busy: false,
    ...over,
  };
}

const fleetOf = (n: number, over: (i: number) => Partial<FleetNode> = () => ({})) =>
  Array.from({ length: n }, (_, i) => node(`n${String(i).padStart(4, "0")}`, over(i)));

async function start(spec: CampaignSpec, fleet: readonly FleetNode[], policy: Policy) {
  const clock = new ManualClock(T0);
  const store = new MemoryCampaignStore(clock);
  const fleetStore = new MemoryFleetStore(store);
  const result = await fleetStore.transaction((tx) =>
    startSystemCampaign(tx, {
      campaignId: "plan-1-g1",
      spec,
      origin: "operator",
      target: { version: "2.0.0", sequence: 2, expiresAt: undefined, platforms: ["linux-amd64"] },
      fleet,
      createdBy: "plan:plan-1",
      now: clock.now(),
      audit: "plan plan-1, group 1 (p)",
      rules: { policy, maxVersion: undefined },
    }),
  );
  return { result, store };
}

const rampSpec = (startPerMinute: number, factor: number) =>
  resolveSpec({
    targetVersion: "2.0.0",
    ramp: { startPerMinute, factor, stepMs: MIN },
    disruptionBudgetPercent: 100,
  });

const policy = (over: Partial<Policy>): Policy => ({
  ...DEFAULT_POLICY,
  minBatchDurationMs: MIN,
  ...over,
});

describe("a system start goes through the one admission", () => {
  it("caps a ramp's first step at the configured firstBatchMaxPercent, not the default 5 %", async () => {
    const { result, store } = await start(
      rampSpec(100, 2),
      fleetOf(200),
      policy({ firstBatchMaxPercent: 1 }),
    );
    expect(result.kind).toBe("started");
    const batches = store.tables.campaigns.get("plan-1-g1")?.campaign.batches ?? [];
    expect(batches.map((b) => b.nodeCount)).toEqual([2, 198]);
  });

  it("refuses a ramp that needs more steps than the policy's batch limit and writes nothing", async () => {
    const { result, store } = await start(rampSpec(1, 1), fleetOf(260), policy({}));
    expect(result).toEqual({
      kind: "refused",
      message:
        "the ramp would need 260 steps for 260 nodes, and a campaign has at most 10 batches (policy.maxBatches); raise its rate, factor or maximum, or lengthen its step",
    });
    expect(store.tables.campaigns.size).toBe(0);
    expect(store.tables.audits).toEqual([]);
  });

  it("skips nodes of a platform the release lacks with platform_unsupported, never offering them", async () => {
    const fleet = fleetOf(25, (i) => (i % 5 === 0 ? { platform: "linux-arm64" } : {}));
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      batches: [{ percent: 100, minDurationMs: MIN }],
    });
    const { result, store } = await start(spec, fleet, policy({ firstBatchMaxPercent: 100 }));
    expect(result).toMatchObject({ kind: "started", campaignId: "plan-1-g1", nodes: 25 });
    // It holds every node of its current (only) batch busy, the skipped ones too (the batch may
    // still roll back): a later start of the same pass counts them.
    expect(result.kind === "started" ? [...result.busyNodeIds].sort() : []).toEqual(
      fleet.map((n) => n.id).sort(),
    );
    const nodes = store.tables.nodes.get("plan-1-g1") ?? [];
    const skipped = nodes.filter((n) => n.state === "skipped");
    expect(skipped.map((n) => n.nodeId).sort()).toEqual(
      fleet.filter((n) => n.platform === "linux-arm64").map((n) => n.id),
    );
    for (const n of skipped) {
      expect(n.code).toBe("platform_unsupported");
      expect(n.finishedAt).toBe(T0);
    }
    expect(nodes.filter((n) => n.state === "waiting")).toHaveLength(20);
  });

  it("starts nothing when every selected node lacks the release's platform", async () => {
    const fleet = fleetOf(3, () => ({ platform: "linux-arm64" }));
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      batches: [{ percent: 100, minDurationMs: MIN }],
    });
    const { result, store } = await start(spec, fleet, policy({ firstBatchMaxPercent: 100 }));
    expect(result.kind).toBe("empty");
    expect(store.tables.campaigns.size).toBe(0);
  });
});
