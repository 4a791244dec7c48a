/**
 * Shared by the revert-grace tests: a one-node campaign with its offer out, the restart's report
 * and the old version's Hello seen by one decision, and a report's boot id rewritten.
 */
import { expect } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { operationId } from "../../../control/campaign/index.js";
import { REVERT_REPORT_GRACE_MS } from "../../../control/campaign/judge-node.js";
import { fleet, type Harness, nodeOf, OLD, reboot, report, start, tick } from "./harness.js";

export const ID = "node-000";
export const G = REVERT_REPORT_GRACE_MS;

/** One decision sees the restart's report and the next boot's Hello on the old version. */
export const seenBackTogether = (h: Harness): void => {
  report(h, ID, "RESTARTING");
  reboot(h, ID, OLD);
  tick(h);
};

export const one = (spec: Partial<CampaignSpecInput> = {}): Harness => {
  const h = start(fleet(1), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 100,
    ...spec,
  });
  tick(h);
  expect(nodeOf(h, ID).state).toBe("offered");
  return h;
};

/** Replaces the node's upgrade report's boot id (what the intake stamped on it). */
export function stampReport(h: Harness, nodeId: string, bootId: string | undefined): void {
  const f = h.facts.get(nodeId)!;
  const id = operationId(h.campaign.id, nodeId, "upgrade");
  h.facts.set(nodeId, {
    ...f,
    reports: f.reports.map((r) => (r.operationId === id ? { ...r, bootId } : r)),
  });
}
