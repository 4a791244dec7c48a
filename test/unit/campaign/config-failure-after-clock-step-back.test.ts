/**
 * A step back of the leader's wall clock is the safe side (docs/decisions.md, "One clock for
 * ordering across Controls"), for config evidence too: a verifying node's config failure is
 * stamped when the leader first saw it, and after a step back of an hour every failure the node
 * reports within its grace is stamped before its offer. A failure from the boot the node came
 * back on is the upgrade's whatever its stamp, so the node fails `config_apply_failed`.
 */
import { describe, expect, it } from "vitest";
import { CAP_CONFIG } from "../../../control/campaign/model.js";
import { configFails, fleet, MIN, NEW, nodeOf, reboot, report, start, tick } from "./harness.js";

const HOUR = 60 * MIN;
const A = "node-000";

describe("a config failure after the leader's clock stepped back", () => {
  it("fails the verifying node config_apply_failed within its grace", () => {
    const h = start(fleet(2, { capabilities: () => ["upgrade.v1", CAP_CONFIG] }), {
      batches: [{ percent: 100, minDurationMs: 10 * MIN }],
      failureThresholdPercent: 50,
      disruptionBudgetPercent: 100,
      configGraceMs: 2 * MIN,
    });
    h.now = 2 * HOUR;
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "offered", offeredAt: 2 * HOUR });
    report(h, A, "RESTARTING");
    h.now += 30_000;
    tick(h);
    // NTP steps the leader's clock back by an hour.
    h.now -= HOUR;
    reboot(h, A, NEW);
    tick(h);
    expect(nodeOf(h, A).state).toBe("verifying");
    // 30 s later, well within its 2-minute grace, its configuration fails on the target.
    h.now += 30_000;
    configFails(h, A);
    tick(h);
    expect(nodeOf(h, A)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });
});
