/**
 * Rollback reach (docs/campaign-engine.md) on a batch without failures: an abort with rollback,
 * or a yank, sends the rollback to a node it canceled that nonetheless came back on the target
 * (a deferred node whose Agent took a second delivery of the offer it deferred), and does not
 * end "batch rolled back" while that node runs the target. (Engine review R01.)
 */
import { describe, expect, it } from "vitest";
import { advance, fleet, NEW, nodeOf, OLD, reboot, report, sent, start, tick } from "./harness.js";

const A = "node-000";
const B = "node-001";

describe("rollback reach on a batch without failures", () => {
  it("rolls back a canceled node that came back on the target during the rollback", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      maxDeferMs: 3_600_000,
    });
    tick(h);
    expect(nodeOf(h, A).state).toBe("offered");
    expect(nodeOf(h, B).state).toBe("offered");
    // A is busy and defers; B takes the upgrade and comes back on the target.
    report(h, A, "DEFERRED", "upgrade", { code: "deferred", message: "lock held" });
    report(h, B, "RESTARTING");
    tick(h);
    expect(nodeOf(h, A).state).toBe("waiting");
    advance(h, 1000);
    reboot(h, B, NEW);
    tick(h);
    expect(nodeOf(h, B).state).toBe("verifying");
    // The operator aborts with rollback: B rolls back, A (waiting) is canceled.
    advance(h, 1000);
    tick(h, [{ kind: "abort", rollback: true }]);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, A).state).toBe("canceled");
    // A's Agent had a second delivery of the offer it deferred (re-sent before its DEFERRED
    // was acknowledged): no longer busy, it applies it and comes back on the target.
    advance(h, 1000);
    report(h, A, "RESTARTING");
    reboot(h, A, NEW);
    tick(h);
    // B confirms its rollback.
    advance(h, 1000);
    report(h, B, "REINSTATED", "rollback");
    reboot(h, B, OLD);
    tick(h);
    advance(h, 1000);
    tick(h);
    // A runs the target: it must be sent the rollback, and the campaign must not say the
    // batch was rolled back while A still runs the target.
    const aOnTarget = h.facts.get(A)?.agentVersion === NEW;
    expect(aOnTarget).toBe(true);
    const seen = {
      rollbackSentToA: sent(h, "rollback").includes(A),
      phase: h.campaign.phase,
      message: h.campaign.message,
      finished: h.campaign.finishedAt !== undefined,
    };
    expect(seen.rollbackSentToA).toBe(true);
    expect(seen.finished).toBe(false);
  });

  it("a yank's rollback reaches a canceled node that came back on the target", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      maxDeferMs: 3_600_000,
    });
    const yanked = { yanked: { reason: "bad build" } };
    tick(h);
    report(h, A, "DEFERRED", "upgrade", { code: "deferred", message: "lock held" });
    report(h, B, "RESTARTING");
    tick(h);
    advance(h, 1000);
    reboot(h, B, NEW);
    tick(h);
    advance(h, 1000);
    tick(h, [], yanked);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, A).state).toBe("canceled");
    advance(h, 1000);
    report(h, A, "RESTARTING");
    reboot(h, A, NEW);
    tick(h, [], yanked);
    advance(h, 1000);
    report(h, B, "REINSTATED", "rollback");
    reboot(h, B, OLD);
    tick(h, [], yanked);
    advance(h, 1000);
    tick(h, [], yanked);
    expect(sent(h, "rollback")).toContain(A);
  });
});
