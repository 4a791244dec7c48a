import type { CampaignNode, CampaignState, NodeState } from "./model.js";
import { isEndedPhase } from "./model.js";
import {
  type CampaignSpec,
  type CampaignSpecInput,
  DEFAULT_POLICY,
  type Policy,
  resolveSpec,
} from "./spec.js";

/**
 * The node states a retry takes again: every final state a node ends in without running the
 * target for the campaign — failed, timed_out, skipped, canceled, and those a rollback took
 * back (rolled_back) or tried to (rollback_failed: a retry of the same release offers it
 * again, or finds it already current and confirms it when its batch passes).
 */
export const RETRYABLE_STATES: readonly NodeState[] = [
  "failed",
  "timed_out",
  "skipped",
  "canceled",
  "rolled_back",
  "rollback_failed",
];

const RETRYABLE: ReadonlySet<NodeState> = new Set(RETRYABLE_STATES);

/**
 * The settings a retry may change: every setting of a start but the target and the nodes it
 * takes (target version, selector and exclusions are the retried campaign's) and the reason
 * (given apart). A key present replaces the retried campaign's setting as a start would take
 * it (defaults included): `undefined` clears an optional one (no failure budget, no windows,
 * the default max defer); a key absent keeps it. `batches` replace a ramp, a `ramp` replaces
 * the batches (both given: the spec has both, which validation refuses).
 */
export type RetrySettings = Partial<
  Omit<CampaignSpecInput, "targetVersion" | "selector" | "exclude" | "reason">
>;

/** A retry's outcome: the new campaign's spec and node ids, or why there can be none. */
export type RetryPlan =
  | { readonly ok: true; readonly spec: CampaignSpec; readonly nodeIds: readonly string[] }
  | {
      readonly ok: false;
      readonly reason: "campaign_state" | "no_nodes";
      readonly message: string;
    };

/**
 * The retried campaign's spec with `settings` applied ({@link RetrySettings}), defaulted by
 * `resolveSpec` under `policy`; the spec itself when no setting is given. Never validates: the
 * retry is admitted as any start is (`admit.ts`, `validateSpec`).
 */
export function retrySpec(
  spec: CampaignSpec,
  settings: RetrySettings,
  policy: Policy = DEFAULT_POLICY,
): CampaignSpec {
  if (Object.keys(settings).length === 0) return spec;
  const given = (key: keyof RetrySettings): boolean => Object.hasOwn(settings, key);
  return resolveSpec(
    {
      ...spec,
      ...settings,
      ...(given("batches") && !given("ramp") ? { ramp: undefined } : {}),
      ...(given("ramp") && !given("batches") ? { batches: [] } : {}),
    },
    policy,
  );
}

/**
 * Builds a retry of an ended campaign: its settings, changed by `settings`
 * ({@link retrySpec}), over its nodes that ended in a {@link RETRYABLE_STATES} state, in their
 * canary order, minus `excludeNodeIds`. The spec's selector becomes exactly those ids (its
 * exclusions are kept), so planning it against the current candidates drops nodes since
 * disabled or newly excluded. Refused while the campaign's phase is not ended (running,
 * paused, rolling_back) or when no node is left.
 */
export function planRetry(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  excludeNodeIds: readonly string[] = [],
  settings: RetrySettings = {},
  policy: Policy = DEFAULT_POLICY,
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
    ...retrySpec(campaign.spec, settings, policy),
    selector: { labels: {}, pools: [], nodeIds },
    exclude: {
      nodeIds: [...campaign.spec.exclude.nodeIds, ...excludeNodeIds],
      tags: campaign.spec.exclude.tags,
    },
  };
  return { ok: true, spec, nodeIds };
}
