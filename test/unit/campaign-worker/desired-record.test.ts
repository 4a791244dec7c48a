/**
 * Which completed campaigns record their target as the desired version of their selector, in
 * the leader's fleet pass on the memory stores: only those whose nodes succeeded within the
 * campaign's threshold, at least one of them.
 */
import { describe, expect, it } from "vitest";
import { resolveSpec } from "../../../control/campaign/index.js";
import { finished, world } from "./fleet-world.js";

const tolerant = resolveSpec({
  targetVersion: "2.0.0",
  selector: { pools: ["p"] },
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 100,
});

describe("recording a completed campaign's target as desired", () => {
  it("a completed campaign that upgraded no node (one failed, two skipped) records nothing, and says why", async () => {
    const w = world(["n1", "n2", "n3"]);
    await finished(
      w.store,
      "c1",
      "alice",
      { n1: "failed", n2: "skipped", n3: "skipped" },
      tolerant,
    );
    await w.runFor(1000);
    expect([...w.fleetStore.tables.desired.values()]).toEqual([]);
    expect(
      w.store.tables.audits
        .filter((a) => a.action.startsWith("desired."))
        .map((a) => [a.action, a.campaignId, a.message]),
    ).toEqual([
      [
        "desired.not_recorded",
        "c1",
        "campaign c1 completed, but no node succeeded: 2.0.0 is not recorded as a desired version",
      ],
    ]);
    w.unlisten();
  });

  it("a completed campaign with one node succeeded and one failed within a 100 % threshold records its target", async () => {
    const w = world(["n1", "n2"]);
    await finished(w.store, "c1", "alice", { n1: "failed", n2: "succeeded" }, tolerant);
    await w.runFor(1000);
    expect([...w.fleetStore.tables.desired.values()].map((d) => d.setBy)).toEqual(["campaign:c1"]);
    w.unlisten();
  });
});
