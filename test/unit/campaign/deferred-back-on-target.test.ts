/**
 * Engine review R04: a node this campaign offered, that answered DEFERRED and waits, comes back on the target
 * (its Agent took a second delivery of the offer it deferred: decisions.md / deferral.ts
 * `resumeTakenDelivery` says it may) before any later report on the upgrade reaches the leader
 * (its reports went to another Control whose writes lag, or were lost). The engine settles it
 * as `succeeded already_current` — "already on the target", its previousVersion overwritten
 * with the target — as if it had never been offered. So when the batch then breaches, the
 * rollback skips it (a succeeded node "does not run the target" for the rollback), and the
 * campaign ends `rolled_back` while that node runs the target the campaign offered it.
 * Expected: a node the campaign offered (upgradeOperationId set) that comes back on the target
 * is in flight (verifying), and a breach's rollback reaches it.
 */
import { describe, expect, it } from "vitest";
import {
  advance,
  configFails,
  fleet,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

const A = "node-000";
const B = "node-001";

describe("a deferred node back on the target", () => {
  it("is not already_current, and a breach rolls it back", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 60_000 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      maxDeferMs: 3_600_000,
      configGraceMs: 120_000,
    });
    tick(h);
    report(h, A, "DEFERRED", "upgrade", { code: "deferred", message: "lock held" });
    report(h, B, "RESTARTING");
    tick(h);
    expect(nodeOf(h, A).state).toBe("waiting");
    expect(nodeOf(h, A).upgradeOperationId).toBeDefined();
    advance(h, 1000);
    reboot(h, B, NEW);
    tick(h);
    expect(nodeOf(h, B).state).toBe("verifying");
    // A applies the offer it deferred (a second delivery) and says Hello on the target; its
    // reports on it have not reached the leader yet.
    advance(h, 5000);
    reboot(h, A, NEW);
    tick(h);
    const a1 = nodeOf(h, A);
    // B's configuration fails within its grace: the batch breaches and rolls back.
    advance(h, 1000);
    configFails(h, B);
    tick(h);
    advance(h, 1000);
    report(h, B, "REINSTATED", "rollback");
    reboot(h, B, OLD);
    tick(h);
    advance(h, 1000);
    tick(h);
    expect(a1.code).not.toBe("already_current");
    expect(sent(h, "rollback")).toContain(A);
  });
});
