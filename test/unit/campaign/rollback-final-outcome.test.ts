/**
 * A final node sent its batch's rollback (it may run the target, its state kept) carries the
 * rollback's outcome on its own record once the rollback ends, so an operator can tell which
 * nodes may still run the bad release however many the campaign's message leaves unnamed.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

/** 20 nodes in one batch of 30 minutes; more than 5 % failed breaches it. */
const oneBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 5,
  disruptionBudgetPercent: 100,
};

/** Seven nodes back on the target whose config fails (final, may run the target): a breach. */
function sevenConfigFailures() {
  const h = start(fleet(20), oneBatch);
  tick(h);
  const ids = batchIds(h, 0);
  const bad = ids.slice(0, 7);
  bringBack(h, bad);
  tick(h);
  for (const id of bad) configFails(h, id);
  h.now = MIN;
  tick(h);
  expect(h.campaign.phase).toBe("rolling_back");
  return { h, bad, rest: ids.slice(7) };
}

describe("the outcome of a final node's rollback", () => {
  it("is recorded on each final node the rollback could not confirm, beyond the five the message names", () => {
    const { h, bad, rest } = sevenConfigFailures();
    for (const id of rest) report(h, id, "REINSTATED", "rollback");
    advance(h, 30 * MIN);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_unconfirmed" });
    expect(h.campaign.message).toContain("and 2 more");
    for (const id of bad) {
      expect(nodeOf(h, id)).toMatchObject({
        state: "failed",
        code: "config_apply_failed",
        rollbackResult: "rollback_unconfirmed",
      });
    }
  });

  it("says rolled_back on a final node that came back on its previous version, and rollback_failed on one whose rollback failed", () => {
    const { h, bad, rest } = sevenConfigFailures();
    for (const id of rest) report(h, id, "REINSTATED", "rollback");
    const [back, refused, ...others] = bad as [string, string, ...string[]];
    reboot(h, back, OLD);
    report(h, refused, "FAILED", "rollback");
    for (const id of others) report(h, id, "REINSTATED", "rollback");
    const ended = advance(h, MIN);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
    expect(nodeOf(h, back)).toMatchObject({ state: "failed", rollbackResult: "rolled_back" });
    // Each outcome is in the decision's reasons too (the worker logs them).
    expect(ended.reasons).toContain(
      `node ${back}: failed (final): rollback rolled_back: back on ${OLD}`,
    );
    expect(nodeOf(h, refused)).toMatchObject({
      state: "failed",
      rollbackResult: "rollback_failed",
    });
    expect(nodeOf(h, others[0]!)).toMatchObject({ rollbackResult: "rolled_back" });
  });

  it("is not recorded while the rollback is still open", () => {
    const { h, bad } = sevenConfigFailures();
    advance(h, MIN);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(nodeOf(h, bad[0]!).rollbackResult).toBeUndefined();
  });
});
