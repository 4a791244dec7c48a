/**
 * The one-node campaign the judge-node tests start from: one batch of 30 minutes that
 * tolerates every failure, so each test sees one node's transitions alone.
 */
import { expect } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { fleet, type Harness, MIN, nodeOf, start, tick } from "./harness.js";

/** The id of the first node of {@link fleet}. */
export const ID = "node-000";

/** One batch of 30 minutes that tolerates every failure. */
export const oneSlowBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 100,
  disruptionBudgetPercent: 100,
};

/** One node, offered at t=0, in one batch of 30 minutes that tolerates every failure. */
export function offered(capabilities = ["upgrade.v1"]): Harness {
  const h = start(fleet(1, { capabilities: () => capabilities }), oneSlowBatch);
  tick(h);
  expect(nodeOf(h, ID).state).toBe("offered");
  return h;
}

/** The reasons of the last decision. */
export function reasons(h: Harness): readonly string[] {
  return h.last?.reasons ?? [];
}
