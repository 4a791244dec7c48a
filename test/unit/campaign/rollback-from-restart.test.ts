/**
 * A rollback's deadline counts again from the agent's report that it restarts onto its previous
 * release, as the leader first judges it: an agent that was away when the rollback was sent gets
 * it re-sent when it comes back, and must not be judged `rollback_unconfirmed` (its slot freed
 * for another campaign's offer) while it restarts (known defect 34, PD1, seed 514232 with
 * faults). The twin of the upgrade's rule (`reconnect-from-restart.test.ts`).
 */
import { describe, expect, it } from "vitest";
import { inFlight } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { fleet, goOffline, goOnline, MIN, nodeOf, report, sent, start, tick } from "./harness.js";

const RECONNECT = 10 * MIN;

/** Two nodes, one batch; node-000 announces its restart and is lost; the batch rolls back. */
function rollingBack(): { h: Harness; lost: string } {
  const h = start(fleet(2), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    disruptionBudgetPercent: 100,
    failureThresholdPercent: 0,
    reconnectTimeoutMs: RECONNECT,
  });
  tick(h);
  const lost = "node-000";
  report(h, lost, "RESTARTING");
  goOffline(h, lost);
  tick(h);
  h.now = RECONNECT;
  tick(h);
  expect(nodeOf(h, lost)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
  expect(h.campaign.phase).toBe("rolling_back");
  expect(sent(h, "rollback")).toContain(lost);
  return { h, lost };
}

describe("a rollback's deadline and the agent's restart onto its previous release", () => {
  it("counts again from the agent's RESTARTING on the rollback: not unconfirmed while it restarts", () => {
    const { h, lost } = rollingBack();
    h.now = RECONNECT + 9 * MIN;
    goOnline(h, lost);
    report(h, lost, "ACCEPTED", "rollback");
    tick(h);
    report(h, lost, "RESTARTING", "rollback");
    goOffline(h, lost);
    tick(h);
    h.now = 2 * RECONNECT;
    tick(h);
    expect(nodeOf(h, lost).rollbackResult).toBeUndefined();
    expect(inFlight(nodeOf(h, lost), h.now)).toBe(true);
    expect(h.campaign.phase).toBe("rolling_back");
    h.now = RECONNECT + 19 * MIN;
    tick(h);
    expect(nodeOf(h, lost).rollbackResult).toBe("rollback_unconfirmed");
    expect(h.campaign.phase).toBe("failed");
  });

  it("wakes the decision at the deadline counted from the restart", () => {
    const { h, lost } = rollingBack();
    h.now = RECONNECT + 9 * MIN;
    report(h, lost, "RESTARTING", "rollback");
    tick(h);
    // The other node's rollback, sent with it, is judged at its own deadline first.
    h.now = 2 * RECONNECT;
    expect(tick(h).wakeAt).toBe(RECONNECT + 19 * MIN);
  });

  it("never moves without such a report", () => {
    const { h, lost } = rollingBack();
    h.now = 2 * RECONNECT;
    tick(h);
    expect(nodeOf(h, lost).rollbackResult).toBe("rollback_unconfirmed");
  });
});
