/**
 * A late rollback's slot (control/campaign/late-rollback.ts) is stamped by the Control that
 * delivered it (`late_sent_at`) and read by any Control: the one holding the node's stream when
 * it is re-sent, or the leader counting its pool's budget. Controls may disagree by up to
 * {@link CONTROL_CLOCK_DISAGREEMENT_MS} (docs/decisions.md, "One clock for ordering across
 * Controls"): a reader whose clock is ahead of the stamping Control's must not end the slot
 * before the stamping Control's own clock says one reconnect timeout has passed.
 */
import { describe, expect, it } from "vitest";
import {
  CONTROL_CLOCK_DISAGREEMENT_MS,
  type LateRollbackRow,
  lateRollbackHoldsSlot,
} from "../../../control/campaign/index.js";

const TIMEOUT = 600_000;
const DELIVERED = 1_000_000;

function row(over: Partial<LateRollbackRow> = {}): LateRollbackRow {
  return {
    operationId: "c1/node-000/rollback",
    nodeId: "node-000",
    pool: "p",
    deliveredAt: DELIVERED,
    reportPhase: undefined,
    reportAt: undefined,
    nodeVersion: "1.1.0",
    previousVersion: "1.0.0",
    reconnectTimeoutMs: TIMEOUT,
    ...over,
  };
}

describe("a late rollback's slot read by a Control whose clock differs from the stamping one's", () => {
  it("holds on a reader ahead by less than the tolerance when the stamping clock has not reached the timeout", () => {
    // The stamping Control's clock reads DELIVERED + TIMEOUT - 1: its slot still holds there.
    const aheadBy = CONTROL_CLOCK_DISAGREEMENT_MS - 1;
    expect(lateRollbackHoldsSlot(row(), DELIVERED + TIMEOUT - 1 + aheadBy)).toBe(true);
  });

  it("holds until the tolerance past the timeout, then ends on every Control", () => {
    const end = DELIVERED + TIMEOUT + CONTROL_CLOCK_DISAGREEMENT_MS;
    expect(lateRollbackHoldsSlot(row(), end - 1)).toBe(true);
    expect(lateRollbackHoldsSlot(row(), end)).toBe(false);
  });

  it("counts from the later of delivery and the agent's latest report, with the same tolerance", () => {
    const reportAt = DELIVERED + 120_000;
    const r = row({ reportPhase: "RESTARTING", reportAt });
    expect(lateRollbackHoldsSlot(r, reportAt + TIMEOUT + CONTROL_CLOCK_DISAGREEMENT_MS - 1)).toBe(
      true,
    );
    expect(lateRollbackHoldsSlot(r, reportAt + TIMEOUT + CONTROL_CLOCK_DISAGREEMENT_MS)).toBe(
      false,
    );
  });

  it("ends at once, on any clock, when the agent reports it done or is back on its previous release", () => {
    expect(
      lateRollbackHoldsSlot(row({ reportPhase: "REINSTATED", reportAt: DELIVERED }), DELIVERED),
    ).toBe(false);
    expect(lateRollbackHoldsSlot(row({ nodeVersion: "1.0.0" }), DELIVERED)).toBe(false);
  });

  it("the tolerance is the 5 s docs/decisions.md designs for", () => {
    expect(CONTROL_CLOCK_DISAGREEMENT_MS).toBe(5000);
  });
});
