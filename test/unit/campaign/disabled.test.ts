import { describe, expect, it } from "vitest";
import { countBatch } from "../../../control/campaign/index.js";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  goOffline,
  inState,
  NEW,
  nodeOf,
  OLD,
  report,
  sent,
  setDisabled,
  start,
  tick,
} from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];

describe("disabled nodes (the registry row says disabled)", () => {
  it("never offers a disabled node: it is skipped node_disabled, out of the denominator", () => {
    const h = start(fleet(4), { batches: one, disruptionBudgetPercent: 100 });
    const [a, b, c, d] = batchIds(h, 0) as [string, string, string, string];
    setDisabled(h, b);
    tick(h);
    expect(sent(h, "upgrade")).toEqual([a, c, d]);
    expect(nodeOf(h, b)).toMatchObject({
      state: "skipped",
      code: "node_disabled",
      message: "disabled by an administrator",
    });
    expect(countBatch(h.nodes.filter((n) => n.batch === 0)).offerable).toBe(3);
  });

  it("skips a node disabled after the batch's first look when the offering reaches it", () => {
    const h = start(fleet(3), { batches: one, concurrency: 1, disruptionBudgetPercent: 100 });
    const [a, b, c] = batchIds(h, 0) as [string, string, string];
    tick(h);
    expect(sent(h, "upgrade")).toEqual([a]);
    setDisabled(h, b);
    // The worker says only `a` changed: the disabled node is not among the changed facts.
    bringBack(h, [a]);
    h.now += 1000;
    tick(h, [], { changedFacts: new Set([a]) });
    expect(sent(h, "upgrade")).toEqual([a, c]);
    expect(nodeOf(h, b)).toMatchObject({ state: "skipped", code: "node_disabled" });
  });

  it("skips a disabled node rather than as offline or already current", () => {
    const h = start(fleet(3, { version: (i) => (i === 0 ? NEW : OLD) }), { batches: one });
    const [x, y, z] = ["node-000", "node-001", "node-002"];
    setDisabled(h, x);
    setDisabled(h, y);
    goOffline(h, y);
    goOffline(h, z);
    tick(h);
    expect(nodeOf(h, x)).toMatchObject({ state: "skipped", code: "node_disabled" });
    expect(nodeOf(h, y)).toMatchObject({ state: "skipped", code: "node_disabled" });
    expect(nodeOf(h, z)).toMatchObject({ state: "skipped", code: "node_offline" });
    expect(sent(h, "upgrade")).toEqual([]);
  });

  it("leaves a node that is already in flight alone when it is disabled", () => {
    const h = start(fleet(2), { batches: one, disruptionBudgetPercent: 100 });
    const [a, b] = batchIds(h, 0) as [string, string];
    tick(h);
    expect(sent(h, "upgrade")).toEqual([a, b]);
    setDisabled(h, a);
    report(h, a, "ACCEPTED");
    advance(h, 1000);
    expect(nodeOf(h, a).state).toBe("applying");
    bringBack(h, [a, b]);
    advance(h, 1000);
    expect(inState(h, "skipped")).toEqual([]);
    expect(h.campaign.phase).toBe("completed");
  });
});
