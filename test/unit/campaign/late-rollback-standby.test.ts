/**
 * Late rollbacks (docs/decisions.md, "Late rollbacks are admitted under their pool's disruption
 * budget"): when a batch's rollback ends, every node of it that this campaign offered the
 * upgrade, that ended in a state a rollback may be sent to and was sent none (it said FAILED, so
 * the engine judged it off the target), is left its rollback in the outbox, marked late: the
 * outbox delivers it only once the node's latest Hello is on the target, and only under its
 * pool's budget. Known defect 33 (seeds 262, 398): an agent that reported FAILED apply_failed
 * yet restarted into the target was never sent a rollback, and its campaign said rolled_back.
 */
import { describe, expect, it } from "vitest";
import type { Action } from "../../../control/campaign/index.js";
import { advance, fleet, NEW, nodeOf, OLD, reboot, report, start, tick } from "./harness.js";

const A = "node-000";
const B = "node-001";

function rollbacks(actions: readonly Action[]) {
  return actions.filter((a) => a.kind === "rollback");
}

describe("a late rollback left when a batch's rollback ends", () => {
  it("is left for a node that said FAILED and was not seen on the target, and the campaign ends without waiting for it", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
    });
    tick(h);
    expect(nodeOf(h, A).state).toBe("offered");
    expect(nodeOf(h, B).state).toBe("offered");
    // B comes back on the target; A says its apply failed (its agent in fact restarts into it).
    report(h, B, "RESTARTING");
    reboot(h, B, NEW);
    report(h, A, "FAILED", "upgrade", { code: "apply_failed", message: "apply failed" });
    advance(h, 1000);
    expect(nodeOf(h, A).state).toBe("failed");
    expect(h.campaign.phase).toBe("rolling_back");
    // A's rollback is not sent now (its latest Hello is on its previous release).
    expect(rollbacks(h.actions).map((a) => a.nodeId)).toEqual([B]);
    // B is confirmed back: the rollback ends, rolled_back, without waiting for A.
    advance(h, 1000);
    report(h, B, "REINSTATED", "rollback");
    reboot(h, B, OLD);
    const last = advance(h, 1000);
    expect(h.campaign.phase).toBe("rolled_back");
    expect(h.campaign.finishedAt).toBeDefined();
    // ...and leaves A its rollback, late: the outbox delivers it once A is seen on the target.
    const late = rollbacks(last.actions);
    expect(late).toEqual([
      expect.objectContaining({ kind: "rollback", nodeId: A, version: OLD, late: true }),
    ]);
    // The record says so, and the rollback's end did not wait on it.
    expect(nodeOf(h, A).state).toBe("failed");
    expect(nodeOf(h, A).rollbackOperationId).toBeUndefined();
  });

  it("is left for no node that succeeded, was rolled back, or was never offered", () => {
    const h = start(fleet(3), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      concurrency: 2,
    });
    tick(h);
    const offered = h.nodes.filter((n) => n.state === "offered").map((n) => n.nodeId);
    const [x, y] = offered as [string, string];
    report(h, y, "RESTARTING");
    reboot(h, y, NEW);
    report(h, x, "FAILED", "upgrade", { code: "apply_failed" });
    advance(h, 1000);
    expect(h.campaign.phase).toBe("rolling_back");
    report(h, y, "REINSTATED", "rollback");
    reboot(h, y, OLD);
    const last = advance(h, 1000);
    expect(h.campaign.phase).toBe("rolled_back");
    // Only x: y was rolled back, the third was canceled before any offer.
    expect(rollbacks(last.actions).map((a) => a.nodeId)).toEqual([x]);
  });
});
