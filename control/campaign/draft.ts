/**
 * The working copy of one decision (internal). Holds mutable copies of the loaded records and
 * collects changes, actions, events and reasons. Nothing outside the decision sees it mutate.
 */

import type {
  Action,
  BatchRecord,
  CampaignEvent,
  CampaignNode,
  CampaignState,
  NodeFacts,
  Target,
} from "./model.js";
import { isFinal } from "./model.js";

/** Mutable state of one decision. */
export interface Draft {
  readonly now: number;
  readonly target: Target;
  campaign: CampaignState;
  /** Every node by id; records are replaced, never mutated. */
  readonly nodes: Map<string, CampaignNode>;
  /** Node ids of each batch in canary order. */
  readonly batchNodeIds: readonly (readonly string[])[];
  /** Campaign nodes per pool. */
  readonly poolSizes: ReadonlyMap<string, number>;
  readonly facts: ReadonlyMap<string, NodeFacts>;
  readonly changedNodeIds: Set<string>;
  campaignChanged: boolean;
  readonly actions: Action[];
  readonly events: CampaignEvent[];
  readonly reasons: string[];
  /** Counts every change, so the decision loop knows when it reached a fixpoint. */
  revision: number;
}

/** Builds a draft over loaded records. */
export function createDraft(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  facts: ReadonlyMap<string, NodeFacts>,
  now: number,
  target: Target,
): Draft {
  const map = new Map(nodes.map((n) => [n.nodeId, n]));
  const sorted = [...nodes].sort((a, b) => a.order - b.order);
  const batchNodeIds = campaign.batches.map((b) =>
    sorted.filter((n) => n.batch === b.index).map((n) => n.nodeId),
  );
  const poolSizes = new Map<string, number>();
  for (const n of nodes) poolSizes.set(n.pool, (poolSizes.get(n.pool) ?? 0) + 1);
  return {
    now,
    target,
    campaign,
    nodes: map,
    batchNodeIds,
    poolSizes,
    facts,
    changedNodeIds: new Set(),
    campaignChanged: false,
    actions: [],
    events: [],
    reasons: [],
    revision: 0,
  };
}

/** The node record (it must exist). */
export function node(d: Draft, nodeId: string): CampaignNode {
  const n = d.nodes.get(nodeId);
  if (n === undefined) throw new Error(`node ${nodeId} is not in campaign ${d.campaign.id}`);
  return n;
}

/** The current records of a batch's nodes, in canary order. */
export function batchNodes(d: Draft, batch: number): CampaignNode[] {
  return (d.batchNodeIds[batch] ?? []).map((id) => node(d, id));
}

/** Every node, in canary order. */
export function allNodes(d: Draft): CampaignNode[] {
  return d.batchNodeIds.flat().map((id) => node(d, id));
}

/** The current batch record. */
export function currentBatch(d: Draft): BatchRecord {
  const b = d.campaign.batches[d.campaign.currentBatch];
  if (b === undefined)
    throw new Error(`campaign ${d.campaign.id} has no batch ${d.campaign.currentBatch}`);
  return b;
}

/**
 * Replaces a node's record with the patch applied; a state change stamps `stateChangedAt`, and
 * `finishedAt` when the new state is final.
 * @throws when the node is already final: final states never change.
 */
export function updateNode(
  d: Draft,
  nodeId: string,
  patch: Partial<CampaignNode>,
  reason?: string,
): CampaignNode {
  const before = node(d, nodeId);
  if (isFinal(before.state)) {
    throw new Error(
      `node ${nodeId} is ${before.state}, a final state; refusing ${JSON.stringify(patch)}`,
    );
  }
  const changesState = patch.state !== undefined && patch.state !== before.state;
  const after: CampaignNode = {
    ...before,
    ...patch,
    ...(changesState ? { stateChangedAt: d.now } : {}),
    ...(changesState && patch.state !== undefined && isFinal(patch.state)
      ? { finishedAt: d.now }
      : {}),
  };
  d.nodes.set(nodeId, after);
  d.changedNodeIds.add(nodeId);
  d.revision++;
  if (reason !== undefined)
    d.reasons.push(`node ${nodeId}: ${before.state} → ${after.state}: ${reason}`);
  return after;
}

/** Replaces the campaign record with the patch applied. */
export function updateCampaign(d: Draft, patch: Partial<CampaignState>, reason?: string): void {
  const before = d.campaign;
  d.campaign = { ...before, ...patch };
  d.campaignChanged = true;
  d.revision++;
  if (patch.phase !== undefined && patch.phase !== before.phase) {
    d.events.push({ kind: "phase_changed", from: before.phase, to: patch.phase });
  }
  if (reason !== undefined) d.reasons.push(`campaign: ${reason}`);
}

/** Replaces one batch record with the patch applied. */
export function updateBatch(d: Draft, index: number, patch: Partial<BatchRecord>): void {
  const batches = d.campaign.batches.map((b) => (b.index === index ? { ...b, ...patch } : b));
  updateCampaign(d, { batches });
}

/** Queues an operation for the outbox. */
export function emit(d: Draft, action: Action): void {
  d.actions.push(action);
  d.revision++;
}

/** The facts of a node, if the worker supplied any. */
export function factsOf(d: Draft, nodeId: string): NodeFacts | undefined {
  return d.facts.get(nodeId);
}
