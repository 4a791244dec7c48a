/**
 * The working copy of one decision (internal). Holds mutable copies of the loaded records and
 * collects changes, actions, events and reasons. Nothing outside the decision sees it mutate.
 *
 * Cost: building a draft is one pass over the nodes; every rule after that reads only the
 * nodes it can act on — the "active" ones (offered … verifying, rolling back) and, in the
 * current batch, the waiting ones — plus per-batch tallies kept up to date by
 * {@link updateNode}. So a decision over a large campaign costs what is in flight, not what
 * the campaign holds.
 */

import type { GateResult } from "./gates.js";
import { type IncrementalJudging, noJudgedMark } from "./judge-since-state.js";
import type {
  Action,
  BatchRecord,
  CampaignEvent,
  CampaignNode,
  CampaignState,
  NodeFacts,
  NodeState,
  PoolLoad,
  Target,
} from "./model.js";
import { isEndedPhase, isFinal } from "./model.js";
import type { BatchTally } from "./tally.js";
import { addToTally, count, emptyTally } from "./tally.js";

export type { BatchTally } from "./tally.js";

/** Where the facts of a node come from: any map-like lookup (a Map, or one built lazily). */
export interface FactsLookup {
  get(nodeId: string): NodeFacts | undefined;
}

/**
 * Mutable state of one decision; its incremental-judging bookkeeping (`judgedUnder`,
 * `factsSince`, `touched`) is described in `judge-since-state.ts`.
 */
export interface Draft extends IncrementalJudging {
  readonly now: number;
  /**
   * When the deciding Control became ready (took the lead); deadlines are never judged within
   * a reconnect timeout of it ({@link judgedDeadline}), and gate evidence before it does not pass
   * a batch (`gate-rules.ts`). -Infinity when not given.
   */
  readyAt: number;
  readonly target: Target;
  /** Set when the target release was yanked (`DecideInput.yanked`): nothing more is offered. */
  yanked?: { readonly reason: string } | undefined;
  /**
   * The yanked releases among the nodes' previous versions (`DecideInput.yankedPrevious`): no
   * rollback is sent onto one of them. Empty when none were given.
   */
  yankedPrevious: ReadonlyMap<string, { readonly reason: string }>;
  /** The current batch's gate results (`DecideInput.gates`); empty when none were given. */
  gateResults: readonly GateResult[];
  campaign: CampaignState;
  /** Every node record in canary order; records are replaced, never mutated. */
  readonly records: CampaignNode[];
  /** Position in `records` of a node (by its order when dense, else by its id). */
  readonly indexOf: (n: Pick<CampaignNode, "nodeId" | "order">) => number | undefined;
  /** Position in `records` of a node id (builds a map of ids on first use). */
  readonly indexById: (nodeId: string) => number | undefined;
  /** Positions in `records` of each batch's nodes, in canary order ({@link moveToBatches} moves them). */
  readonly batchIndexes: readonly number[][];
  /** Positions of the nodes in an active state (offered … verifying, rolling back). */
  readonly active: Set<number>;
  /** `active` in canary order, rebuilt only after the set changed (undefined: stale). */
  activeSorted: number[] | undefined;
  /** Counts per batch, kept current by {@link updateNode}. */
  readonly tallies: readonly BatchTally[];
  /** Batches whose waiting nodes were already settled without an offer in this decision. */
  readonly settledBatches: Set<number>;
  /** The nodes whose facts may have changed since the previous decision, in `batch` (see `DecideInput.changedFacts`). */
  changedFacts: { readonly batch: number; readonly nodeIds: ReadonlySet<string> } | undefined;
  /** Per batch, the position in `batchIndexes[b]` before which no node is waiting. */
  readonly waitingFrom: number[];
  /** Campaign nodes per pool. */
  readonly poolSizes: ReadonlyMap<string, number>;
  /** The fleet-wide load per pool (see `DecideInput.pools`); undefined: this campaign alone. */
  readonly pools: ReadonlyMap<string, PoolLoad> | undefined;
  readonly facts: FactsLookup;
  readonly changed: Set<number>;
  campaignChanged: boolean;
  readonly actions: Action[];
  /** The operation ids of `actions`, to refuse a second operation with the same id. */
  readonly emitted: Set<string>;
  readonly events: CampaignEvent[];
  readonly reasons: string[];
  /** Counts every change, so the decision loop knows when it reached a fixpoint. */
  revision: number;
}

/** True for the states a rule may move without an offer: offered … verifying, rolling back. */
export function isActive(state: NodeState): boolean {
  return state !== "waiting" && !isFinal(state);
}

/**
 * Builds a draft over loaded records (one pass; sorted only when not in canary order yet).
 * `positions` (node id → index in `nodes`) is used when `nodes` is already in canary order.
 */
export function createDraft(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  facts: FactsLookup,
  now: number,
  target: Target,
  positions?: ReadonlyMap<string, number>,
  pools?: ReadonlyMap<string, PoolLoad>,
): Draft {
  let sorted = true;
  for (let i = 1; i < nodes.length && sorted; i++) {
    if ((nodes[i - 1] as CampaignNode).order > (nodes[i] as CampaignNode).order) sorted = false;
  }
  const records = sorted ? [...nodes] : [...nodes].sort((a, b) => a.order - b.order);
  // In a planned campaign the canary order IS the position: no map of ids is needed.
  let dense = true;
  for (let i = 0; i < records.length && dense; i++) {
    if ((records[i] as CampaignNode).order !== i) dense = false;
  }
  let byId: ReadonlyMap<string, number> | undefined = sorted ? positions : undefined;
  const indexById = (nodeId: string): number | undefined => {
    byId ??= new Map(records.map((r, i) => [r.nodeId, i]));
    return byId.get(nodeId);
  };
  const indexOf = (n: Pick<CampaignNode, "nodeId" | "order">): number | undefined =>
    dense && records[n.order]?.nodeId === n.nodeId ? n.order : indexById(n.nodeId);
  const batchIndexes: number[][] = campaign.batches.map(() => []);
  const tallies = campaign.batches.map(emptyTally);
  const active = new Set<number>();
  const poolSizes = new Map<string, number>();
  for (let i = 0; i < records.length; i++) {
    const n = records[i] as CampaignNode;
    batchIndexes[n.batch]?.push(i);
    const t = tallies[n.batch];
    if (t !== undefined) {
      addToTally(t, n);
    }
    if (isActive(n.state)) active.add(i);
    poolSizes.set(n.pool, (poolSizes.get(n.pool) ?? 0) + 1);
  }
  return {
    now,
    readyAt: Number.NEGATIVE_INFINITY,
    target,
    gateResults: [],
    yankedPrevious: new Map(),
    campaign,
    records,
    indexOf,
    indexById,
    batchIndexes,
    active,
    activeSorted: undefined,
    tallies,
    settledBatches: new Set(),
    changedFacts: undefined,
    waitingFrom: campaign.batches.map(() => 0),
    ...noJudgedMark(),
    poolSizes,
    pools,
    facts,
    changed: new Set(),
    campaignChanged: false,
    actions: [],
    emitted: new Set(),
    events: [],
    reasons: [],
    revision: 0,
  };
}

/** The current record of a node of the campaign, by id (undefined when it is not in it). */
export function nodeById(d: Draft, nodeId: string): CampaignNode | undefined {
  const at = d.indexById(nodeId);
  return at === undefined ? undefined : d.records[at];
}

/** The current records of a batch's nodes, in canary order. */
export function batchNodes(d: Draft, batch: number): CampaignNode[] {
  return (d.batchIndexes[batch] ?? []).map((i) => d.records[i] as CampaignNode);
}

/** The active nodes (offered … verifying, rolling back) of a batch, in canary order. */
export function activeNodes(d: Draft, batch?: number): CampaignNode[] {
  d.activeSorted ??= [...d.active].sort((a, b) => a - b);
  const out: CampaignNode[] = [];
  for (const i of d.activeSorted) {
    const n = d.records[i] as CampaignNode;
    if (batch === undefined || n.batch === batch) out.push(n);
  }
  return out;
}

/** The waiting nodes of a batch, in canary order. */
export function waitingNodes(d: Draft, batch: number): CampaignNode[] {
  const indexes = d.batchIndexes[batch] ?? [];
  const out: CampaignNode[] = [];
  let from = d.waitingFrom[batch] ?? 0;
  while (from < indexes.length && d.records[indexes[from] as number]?.state !== "waiting") from++;
  d.waitingFrom[batch] = from;
  for (let k = from; k < indexes.length; k++) {
    const n = d.records[indexes[k] as number] as CampaignNode;
    if (n.state === "waiting") out.push(n);
  }
  return out;
}

/** Every node, in canary order. */
export function allNodes(d: Draft): CampaignNode[] {
  return d.records;
}

/** The current batch record. */
export function currentBatch(d: Draft): BatchRecord {
  const b = d.campaign.batches[d.campaign.currentBatch];
  if (b === undefined)
    throw new Error(`campaign ${d.campaign.id} has no batch ${d.campaign.currentBatch}`);
  return b;
}

/** The tally of a batch. */
export function tallyOf(d: Draft, batch: number): BatchTally {
  return d.tallies[batch] ?? emptyTally();
}

/** True when no node of the campaign is left open. */
export function allFinal(d: Draft): boolean {
  return d.tallies.every((t) => t.open === 0);
}

/**
 * Replaces the current record of node `n` with the patch applied; a state change stamps
 * `stateChangedAt`, and `finishedAt` when the new state is final.
 * @throws when the node is already final: final states never change.
 */
export function updateNode(
  d: Draft,
  n: CampaignNode,
  patch: Partial<CampaignNode>,
  reason?: string,
): CampaignNode {
  const nodeId = n.nodeId;
  const at = d.indexOf(n);
  const before = at === undefined ? undefined : d.records[at];
  if (at === undefined || before === undefined) {
    throw new Error(`node ${nodeId} is not in campaign ${d.campaign.id}`);
  }
  if (isFinal(before.state)) {
    throw new Error(
      `node ${nodeId} is ${before.state}, a final state; refusing ${JSON.stringify(patch)}`,
    );
  }
  if (patch.batch !== undefined && patch.batch !== before.batch) {
    throw new Error(`node ${nodeId}: a node changes batch only by moveToBatches`);
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
  d.records[at] = after;
  // A deferred node goes back to waiting: the batch's first waiting node may be earlier now.
  if (after.state === "waiting" && before.state !== "waiting") d.waitingFrom[after.batch] = 0;
  const t = d.tallies[after.batch];
  if (t !== undefined && before.state !== after.state) {
    count(t, before, -1);
    addToTally(t, after);
  }
  const wasActive = d.active.has(at);
  if (isActive(after.state) !== wasActive) {
    if (wasActive) d.active.delete(at);
    else d.active.add(at);
    d.activeSorted = undefined;
  }
  d.changed.add(at);
  d.touched.add(at);
  d.revision++;
  if (reason !== undefined)
    d.reasons.push(`node ${nodeId}: ${before.state} → ${after.state}: ${reason}`);
  return after;
}

/** One node to move to a later batch ({@link moveToBatches}). */
export interface BatchMove {
  readonly node: CampaignNode;
  /** The later batch it goes to. */
  readonly to: number;
  readonly patch: Partial<CampaignNode>;
  readonly reason: string;
}

/**
 * Moves each waiting node of `moves` from its batch to its later batch `to` (deferring nodes
 * carried over, `deferral.ts`), with its `patch` applied: the batches' positions, tallies and
 * `nodeCount` follow, so every count of those batches (threshold, sample, pass, gates, the
 * API's) is of their nodes as they are now. The same as moving them one at a time, in the
 * order given, and linear in the batches touched: their position lists are rebuilt once
 * (the moved positions dropped from each source, merged into each target in canary order),
 * never spliced per node.
 * @throws when a node is not waiting or its `to` is not a later batch.
 */
export function moveToBatches(d: Draft, moves: readonly BatchMove[]): void {
  if (moves.length === 0) return;
  const leaving = new Map<number, Set<number>>();
  const arriving = new Map<number, Set<number>>();
  const delta = new Map<number, number>();
  for (const { node: n, to, patch, reason } of moves) {
    const at = d.indexOf(n);
    const before = at === undefined ? undefined : d.records[at];
    if (at === undefined || before === undefined) {
      throw new Error(`node ${n.nodeId} is not in campaign ${d.campaign.id}`);
    }
    const from = before.batch;
    if (
      before.state !== "waiting" ||
      to <= from ||
      d.batchIndexes[from] === undefined ||
      d.batchIndexes[to] === undefined
    ) {
      throw new Error(
        `node ${n.nodeId} (${before.state}, batch ${from + 1}) cannot move to batch ${to + 1}`,
      );
    }
    const after: CampaignNode = { ...before, ...patch, state: "waiting", batch: to };
    d.records[at] = after;
    // A node moved on again in the same call leaves the batch it had arrived in.
    if (arriving.get(from)?.delete(at) !== true) setOf(leaving, from).add(at);
    setOf(arriving, to).add(at);
    delta.set(from, (delta.get(from) ?? 0) - 1);
    delta.set(to, (delta.get(to) ?? 0) + 1);
    d.waitingFrom[from] = 0;
    d.waitingFrom[to] = 0;
    const fromTally = d.tallies[from];
    const toTally = d.tallies[to];
    if (fromTally !== undefined) count(fromTally, before, -1);
    if (toTally !== undefined) addToTally(toTally, after);
    d.changed.add(at);
    d.touched.add(at);
    d.revision++;
    d.reasons.push(`node ${n.nodeId}: batch ${from + 1} → batch ${to + 1}: ${reason}`);
  }
  for (const [batch, gone] of leaving) dropPositions(d.batchIndexes[batch] as number[], gone);
  for (const [batch, added] of arriving) {
    mergePositions(d.batchIndexes[batch] as number[], [...added]);
  }
  const sizes = d.campaign.batches.map((b) => {
    const change = delta.get(b.index) ?? 0;
    return change === 0 ? b : { ...b, nodeCount: b.nodeCount + change };
  });
  updateCampaign(d, { batches: sizes });
}

function setOf<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
  const found = map.get(key);
  if (found !== undefined) return found;
  const set = new Set<V>();
  map.set(key, set);
  return set;
}

/** Removes `gone` from the ascending positions `list`, in place, in one pass. */
function dropPositions(list: number[], gone: ReadonlySet<number>): void {
  let kept = 0;
  for (const p of list) if (!gone.has(p)) list[kept++] = p;
  list.length = kept;
}

/** Merges `added` into the ascending positions `list`, in place: canary order kept. */
function mergePositions(list: number[], added: number[]): void {
  if (added.length === 0) return;
  added.sort((a, b) => a - b);
  const merged: number[] = new Array(list.length + added.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < list.length || j < added.length) {
    const x = list[i];
    const y = added[j];
    if (y === undefined || (x !== undefined && x < y)) {
      merged[k++] = x as number;
      i++;
    } else {
      merged[k++] = y;
      j++;
    }
  }
  for (let m = 0; m < merged.length; m++) list[m] = merged[m] as number;
}

/** The changed node records, in canary order. */
export function changedNodes(d: Draft): CampaignNode[] {
  return [...d.changed].sort((a, b) => a - b).map((i) => d.records[i] as CampaignNode);
}

/**
 * Replaces the campaign record with the patch applied.
 * @throws when it would change an ended phase: an ended phase never changes.
 */
export function updateCampaign(d: Draft, patch: Partial<CampaignState>, reason?: string): void {
  const before = d.campaign;
  if (patch.phase !== undefined && patch.phase !== before.phase && isEndedPhase(before.phase)) {
    throw new Error(
      `campaign ${before.id} ended ${before.phase}; refusing to change its phase to ${patch.phase}`,
    );
  }
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

/**
 * Queues an operation for the outbox.
 * @throws when this decision already queued an operation with the same id (ids are unique).
 */
export function emit(d: Draft, action: Action): void {
  if (d.emitted.has(action.operationId)) {
    throw new Error(`operation ${action.operationId} emitted twice in one decision`);
  }
  d.emitted.add(action.operationId);
  d.actions.push(action);
  d.revision++;
}

/**
 * When a deadline of the campaign is judged: the deadline itself, but never within a reconnect
 * timeout of the moment the deciding Control became ready. While no Control decided (a
 * restart, a takeover), no node could be sent its operation or be seen back, so every node
 * gets a full timeout from then.
 */
export function judgedDeadline(d: Draft, deadline: number): number {
  return Math.max(deadline, d.readyAt + d.campaign.spec.reconnectTimeoutMs);
}

/** The facts of a node, if the worker supplied any. */
export function factsOf(d: Draft, nodeId: string): NodeFacts | undefined {
  return d.facts.get(nodeId);
}
