/**
 * A breach never rolls a node back onto a yanked release (`DecideInput.yankedPrevious`): such a
 * node stays on the target, its rollback withheld (code rollback_withheld on a node that was
 * upgrading, rollbackResult rollback_withheld on a final one), and the others roll back as
 * before. A yank of the target stops the campaign with code release_yanked even when its batch
 * is over its threshold too, and the waiting nodes it cancels say release_yanked.
 */
import { describe, expect, it } from "vitest";
import {
  batchIds,
  bringBack,
  configFails,
  fleet,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/** 4 nodes, one batch, all offered at once; even-numbered nodes on OLD, the others on 1.5.0. */
function mixed() {
  const h = start(fleet(4, { version: (i) => (i % 2 === 0 ? OLD : "1.5.0") }), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    concurrency: 4,
    disruptionBudgetPercent: 100,
    failureThresholdPercent: 0,
    configGraceMs: 0,
  });
  tick(h);
  return h;
}

const YANKED = new Map([[OLD, { reason: "corrupts the cache" }]]);

describe("a rollback onto a yanked release", () => {
  it("is withheld from the nodes whose previous release is yanked; they are named, the others roll back", () => {
    const h = mixed();
    expect(sent(h, "upgrade")).toHaveLength(4);
    // node-000 (OLD) came back on the target and its config failed: the breach.
    bringBack(h, ["node-000"]);
    configFails(h, "node-000");
    h.now += 1_000;
    tick(h, [], { yankedPrevious: YANKED });
    expect(h.campaign.phase).toBe("rolling_back");
    const rolledBack = h.actions.filter((a) => a.kind === "rollback");
    expect(rolledBack.map((a) => a.version)).not.toContain(OLD);
    // node-001 and node-003 (1.5.0, still offered) roll back; node-000 and node-002 (OLD) do not.
    expect(rolledBack.map((a) => a.nodeId).sort()).toEqual(["node-001", "node-003"]);
    // The final node keeps its state and says its rollback was withheld.
    expect(nodeOf(h, "node-000")).toMatchObject({
      state: "failed",
      code: "config_apply_failed",
      rollbackResult: "rollback_withheld",
    });
    // The one that was upgrading when the breach came ends failed, rollback withheld, named.
    expect(nodeOf(h, "node-002")).toMatchObject({
      state: "failed",
      code: "rollback_withheld",
      rollbackResult: "rollback_withheld",
    });
    expect(nodeOf(h, "node-002").message).toContain(`previous release ${OLD} was yanked`);
    // The others come back on 1.5.0: the campaign ends rolled_back, naming the withheld nodes.
    for (const id of ["node-001", "node-003"]) {
      reboot(h, id, "1.5.0");
      report(h, id, "REINSTATED", "rollback");
    }
    h.now += 1_000;
    tick(h, [], { yankedPrevious: YANKED });
    expect(h.campaign.phase).toBe("rolled_back");
    expect(h.campaign.message).toContain("rollback withheld from 2 node(s)");
    expect(h.campaign.message).toContain("node-000");
    expect(h.campaign.message).toContain("node-002");
    expect(h.actions.filter((a) => a.kind === "rollback")).toHaveLength(2);
  });

  it("still rolls every node back when no previous release is yanked", () => {
    const h = mixed();
    const ids = batchIds(h, 0);
    report(h, ids[0] ?? "", "REFUSED");
    h.now += 1_000;
    tick(h, [], { yankedPrevious: new Map() });
    expect(sent(h, "rollback").sort()).toEqual(ids.slice(1).sort());
  });
});

describe("a yank of the target", () => {
  it("stops with code release_yanked even when the batch is over its threshold too", () => {
    const h = start(fleet(8), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 2,
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
      configGraceMs: 0,
    });
    tick(h);
    const offered = sent(h, "upgrade");
    report(h, offered[0] ?? "", "REFUSED");
    h.now += 1_000;
    tick(h, [], { yanked: { reason: "bad build" } });
    expect(h.campaign).toMatchObject({ code: "release_yanked" });
    const canceled = h.nodes.filter((n) => n.state === "canceled");
    expect(canceled.length).toBeGreaterThan(0);
    for (const n of canceled) expect(n.code).toBe("release_yanked");
  });
});
