import type { CampaignNode, CampaignState, NodeState } from "./model.js";
import { isEndedPhase } from "./model.js";
import type { CampaignSpec } from "./spec.js";

/** The node states a retry takes again. */
export const RETRYABLE_STATES: readonly NodeState[] = [
  "failed",
  "timed_out",
  "skipped",
  "canceled",
];

const RETRYABLE: ReadonlySet<NodeState> = new Set(RETRYABLE_STATES);

/** A retry's outcome: the new campaign's spec and node ids, or why there can be none. */
export type RetryPlan =
  | { readonly ok: true; readonly spec: CampaignSpec; readonly nodeIds: readonly string[] }
  | {
      readonly ok: false;
      readonly reason: "campaign_state" | "no_nodes";
      readonly message: string;
    };

/**
 * Builds a retry of an ended campaign: the same settings over its nodes that ended failed,
 * timed_out, skipped or canceled, in their canary order, minus `excludeNodeIds`. The spec's
 * selector becomes exactly those ids (its exclusions are kept), so planning it against the
 * current candidates drops nodes since disabled or newly excluded. Refused while the campaign's
 * phase is not ended (running, paused, rolling_back) or when no node is left.
 */
export function planRetry(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  excludeNodeIds: readonly string[] = [],
): RetryPlan {
  if (!isEndedPhase(campaign.phase)) {
    return {
      ok: false,
      reason: "campaign_state",
      message: `campaign ${campaign.id} is ${campaign.phase}; only an ended campaign can be retried`,
    };
  }
  const excluded = new Set(excludeNodeIds);
  const nodeIds = nodes
    .filter((n) => RETRYABLE.has(n.state) && !excluded.has(n.nodeId))
    .sort((a, b) => a.order - b.order)
    .map((n) => n.nodeId);
  if (nodeIds.length === 0) {
    return { ok: false, reason: "no_nodes", message: "no node of the campaign is left to retry" };
  }
  const spec: CampaignSpec = {
    ...campaign.spec,
    selector: { labels: {}, pools: [], nodeIds },
    exclude: {
      nodeIds: [...campaign.spec.exclude.nodeIds, ...excludeNodeIds],
      tags: campaign.spec.exclude.tags,
    },
  };
  return { ok: true, spec, nodeIds };
}
