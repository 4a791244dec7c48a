/**
 * A node that announced its restart and comes back on its old version was reverted by its
 * supervisor, which says why right after the Welcome: the engine gives that report a short
 * grace, so a failed health check is recorded as such, and judges the node reverted after it.
 */
import { describe, expect, it } from "vitest";
import { REVERT_REPORT_GRACE_MS } from "../../../control/campaign/judge-node.js";
import { bringBack, fleet, nodeOf, OLD, report, start, tick } from "./harness.js";

const ID = "node-000";
const restarting = () => {
  const h = start(fleet(1), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 100,
  });
  tick(h);
  report(h, ID, "RESTARTING");
  tick(h);
  expect(nodeOf(h, ID).state).toBe("restarting");
  bringBack(h, [ID], OLD);
  return h;
};

describe("a node back on its old version after its restart", () => {
  it("fails health_check_failed with the agent's message when that report follows its Hello", () => {
    const h = restarting();
    const back = tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: h.now });
    expect(back.wakeAt).toBe(h.now + REVERT_REPORT_GRACE_MS);
    // The decision says why the node waits (the worker logs it).
    expect(back.reasons).toContain(
      `node ${ID}: restarting → restarting: back on another version; awaiting its report`,
    );
    h.now += 20;
    report(h, ID, "FAILED", "upgrade", {
      code: "health_check_failed",
      message: '2.0.0 failed health check "api"; reverted to 1.0.0',
    });
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "health_check_failed",
      message: '2.0.0 failed health check "api"; reverted to 1.0.0',
    });
  });

  it("is reverted once the grace passed without a report", () => {
    const h = restarting();
    tick(h);
    h.now += REVERT_REPORT_GRACE_MS - 1;
    tick(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    h.now += 1;
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("waits for that report too when its restart's report and its Hello reach one decision together", () => {
    // The restart's report and the next boot's Hello can be written before the leader decides
    // again (the report is flushed just before the decision that sees the Hello).
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
    });
    tick(h);
    expect(nodeOf(h, ID).state).toBe("offered");
    report(h, ID, "RESTARTING");
    bringBack(h, [ID], OLD);
    const back = tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "restarting", revertSeenAt: h.now });
    expect(back.wakeAt).toBe(h.now + REVERT_REPORT_GRACE_MS);
    h.now += 20;
    report(h, ID, "FAILED", "upgrade", {
      code: "health_check_failed",
      message: '2.0.0 failed health check "api"; reverted to 1.0.0',
    });
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "health_check_failed" });
  });

  it("is reverted after the grace when both reached one decision and no report followed", () => {
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
    });
    tick(h);
    report(h, ID, "RESTARTING");
    bringBack(h, [ID], OLD);
    tick(h);
    h.now += REVERT_REPORT_GRACE_MS;
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("is reverted at once when it comes back on its old version without having announced a restart", () => {
    const h = start(fleet(1), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
    });
    tick(h);
    report(h, ID, "APPLYING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("applying");
    bringBack(h, [ID], OLD);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });
});
