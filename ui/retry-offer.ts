/**
 * Whether a finished campaign's page offers "Retry N nodes", and with which count: exactly
 * the nodes `campaign retry` would take again, counted over the engine's own list
 * (`RETRYABLE_STATES`, control/campaign/retry.ts), never a second copy of it. Pure, and free
 * of the DOM, so it is tested in Node.
 */
import { RETRYABLE_STATES } from "../control/campaign/retry.js";
import {
  type Campaign,
  NodeState,
  type NodeStateCount,
} from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { countIn, FINAL_PHASES } from "./format.js";

/** The proto values of the node states a retry takes again. */
export const RETRIED_STATES: readonly NodeState[] = RETRYABLE_STATES.map(
  (s) => NodeState[s.toUpperCase() as keyof typeof NodeState],
);

/** How many of the counted nodes a retry would take again. */
export function retryableCount(counts: readonly NodeStateCount[]): number {
  return countIn(counts, RETRIED_STATES);
}

/**
 * The retry button's label for `campaign` ("Retry 1 node", "Retry 3 nodes"), or undefined
 * when none is offered: the campaign's phase is not final (Control refuses a retry then) or
 * no node of it is one a retry would take.
 */
export function retryLabel(campaign: Pick<Campaign, "phase" | "counts">): string | undefined {
  if (!FINAL_PHASES.has(campaign.phase)) return undefined;
  const n = retryableCount(campaign.counts);
  if (n === 0) return undefined;
  return `Retry ${n} node${n === 1 ? "" : "s"}`;
}
