/**
 * Engine review R05: a deferred node (waiting) whose Agent took a later delivery of the offer it deferred
 * (it reports DOWNLOADING: deferral.ts `resumeTakenDelivery` puts such a node back in flight)
 * is canceled instead of rolled back when the same decision also sees the breach: `step()` runs
 * judgeBreach (→ startRollback → cancelWaiting) before settleWithoutOffer, the only place that
 * looks at a waiting node's later reports. A canceled node "may run the target" only once its
 * Hello says so (rollback.ts `mayRunTarget`), so with nothing else rolling back the rollback
 * ends at once: the campaign says `rolled_back` and finishes while that node is still applying
 * the upgrade, and then runs the target. Expected: the node is rolled back (or the rollback's
 * end waits for it), and the campaign does not say rolled_back while it runs the target.
 */
import { describe, expect, it } from "vitest";
import { advance, fleet, NEW, nodeOf, reboot, report, sent, start, tick } from "./harness.js";

const A = "node-000";
const B = "node-001";

describe("a breach and a deferred node's later delivery seen in one decision", () => {
  it("rolls the node back instead of canceling it and finishing rolled_back", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      maxDeferMs: 3_600_000,
    });
    tick(h);
    report(h, A, "DEFERRED", "upgrade", { code: "deferred", message: "lock held" });
    tick(h);
    expect(nodeOf(h, A).state).toBe("waiting");
    // One decision sees both: B failed to apply, and A (no longer busy) took a second
    // delivery of the offer and is downloading it.
    advance(h, 1000);
    report(h, B, "FAILED", "upgrade", { code: "apply_failed", message: "disk full" });
    report(h, A, "DOWNLOADING");
    tick(h);
    // It is in flight again, so the rollback reaches it; the campaign waits for it.
    expect(nodeOf(h, A).state).toBe("rolling_back");
    expect(h.campaign.finishedAt).toBeUndefined();
    // A finishes applying and comes back on the target.
    advance(h, 30_000);
    report(h, A, "RESTARTING");
    reboot(h, A, NEW);
    tick(h);
    expect(h.facts.get(A)?.agentVersion).toBe(NEW);
    expect(h.campaign.phase === "rolled_back" && !sent(h, "rollback").includes(A)).toBe(false);
  });
});
