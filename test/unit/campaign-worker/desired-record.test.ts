/**
 * Which completed campaigns record their target as the desired version of their selector, in
 * the leader's fleet pass on the memory stores: only those whose nodes succeeded within the
 * campaign's threshold, at least one of them.
 */
import { describe, expect, it } from "vitest";
import { desiredIdOf, planRetry, resolveSpec } from "../../../control/campaign/index.js";
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

  it("a completed retry records its target over its original campaign's selector, not over the list of node ids it retried", async () => {
    const w = world(["n1", "n2", "n3"]);
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["p"] },
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    await finished(w.store, "c1", "alice", { n1: "failed", n2: "canceled", n3: "canceled" }, spec, {
      phase: "rolled_back",
    });
    const original = w.store.tables.campaigns.get("c1");
    const retry = planRetry(
      original?.campaign ?? expect.fail("c1"),
      w.store.tables.nodes.get("c1") ?? [],
    );
    if (!retry.ok) expect.fail(retry.message);
    expect(retry.spec.selector.nodeIds).toHaveLength(3);
    await finished(
      w.store,
      "c2",
      "alice",
      { n1: "succeeded", n2: "succeeded", n3: "succeeded" },
      retry.spec,
      {
        retryOf: "c1",
      },
    );
    await w.runFor(1000);
    const recorded = [...w.fleetStore.tables.desired.values()];
    expect(recorded.map((d) => [d.id, d.setBy, d.selector, d.exclude])).toEqual([
      [
        desiredIdOf(spec.selector, spec.exclude),
        "campaign:c2",
        { labels: {}, pools: ["p"], nodeIds: [] },
        { nodeIds: [], tags: {} },
      ],
    ]);
    w.unlisten();
  });

  it("a retry of a retry records over the first campaign's selector", async () => {
    const w = world(["n1", "n2"]);
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      selector: { pools: ["p"] },
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    const ids = { labels: {}, pools: [], nodeIds: ["n1", "n2"] };
    await finished(w.store, "c1", "alice", { n1: "failed", n2: "canceled" }, spec, {
      phase: "rolled_back",
    });
    await finished(
      w.store,
      "c2",
      "alice",
      { n1: "failed", n2: "canceled" },
      { ...spec, selector: ids },
      {
        phase: "rolled_back",
        retryOf: "c1",
      },
    );
    await finished(
      w.store,
      "c3",
      "alice",
      { n1: "succeeded", n2: "succeeded" },
      { ...spec, selector: ids },
      {
        retryOf: "c2",
      },
    );
    await w.runFor(1000);
    expect([...w.fleetStore.tables.desired.values()].map((d) => [d.setBy, d.selector])).toEqual([
      ["campaign:c3", { labels: {}, pools: ["p"], nodeIds: [] }],
    ]);
    w.unlisten();
  });
});
