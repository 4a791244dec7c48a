/**
 * Arithmetic of batches: elapsed time, slots, budgets, failures and breach. Pure functions of
 * records and `now`, shared by the engine, the API's views and the tests.
 */

import { assertNever } from "./assert-never.js";
import type { BatchRecord, CampaignNode, CampaignState, PoolLoad } from "./model.js";
import { isEndedPhase, isFailure, isFinal } from "./model.js";
import { NODE_STATE_TRAITS, type NodeStateTraits } from "./node-state-traits.js";
import { closedMsBetween, type MaintenanceWindow } from "./windows.js";

/**
 * Time the batch has run at `now`, paused time excluded: closed pauses (`pausedMs`) and the open
 * one (`pausedAt`, the campaign's, counted from the later of it and the batch start). 0 before start.
 */
export function elapsedMs(batch: BatchRecord, pausedAt: number | undefined, now: number): number {
  if (batch.startedAt === undefined) return 0;
  const end = batch.endedAt ?? now;
  const open = pausedAt === undefined ? 0 : Math.max(0, end - Math.max(pausedAt, batch.startedAt));
  return Math.max(0, end - batch.startedAt - batch.pausedMs - open);
}

/**
 * The time that counts toward the batch's minimum duration at `now`: the time since the batch
 * started that was neither paused nor outside every maintenance window of the campaign, each
 * left out once: {@link elapsedMs} less the closed time not already left out as paused (the
 * closed pauses' `pausedClosedMs`, the open pause's closed time). A record without
 * `pausedClosedMs` (an earlier release) leaves its paused closed time out twice, which never
 * overstates. Equal to `elapsedMs` without windows.
 */
export function countedMs(
  batch: BatchRecord,
  pausedAt: number | undefined,
  now: number,
  windows: readonly MaintenanceWindow[] | undefined,
): number {
  const elapsed = elapsedMs(batch, pausedAt, now);
  if (batch.startedAt === undefined || windows === undefined || windows.length === 0)
    return elapsed;
  const end = batch.endedAt ?? now;
  const openPauseClosed =
    pausedAt === undefined ? 0 : closedMsBetween(windows, Math.max(pausedAt, batch.startedAt), end);
  const closedUnpaused =
    closedMsBetween(windows, batch.startedAt, end) - (batch.pausedClosedMs ?? 0) - openPauseClosed;
  return Math.max(0, elapsed - Math.max(0, closedUnpaused));
}

/** The soak time counted since `settled` at `now`: time inside the windows only. */
export function soakedMs(
  settled: number,
  now: number,
  windows: readonly MaintenanceWindow[] | undefined,
): number {
  return Math.max(0, now - settled - closedMsBetween(windows, settled, now));
}

/**
 * True while the node occupies a slot of its campaign's concurrency and of its pool's
 * disruption budget ({@link NodeStateTraits.holdsSlot}): offered, applying, restarting, rolling
 * back, verifying within its config grace, or final (failed, timed_out, skipped, canceled) with
 * a rollback pending ({@link rollbackPending}). A node verifying past its grace is only
 * watched; it holds no slot. The SQL adapter's equivalent is `holdsSlotSql`.
 */
export function inFlight(n: CampaignNode, now: number): boolean {
  const use = NODE_STATE_TRAITS[n.state].holdsSlot;
  switch (use) {
    case "always":
      return true;
    case "within_grace":
      return n.graceEndsAt === undefined || n.graceEndsAt > now;
    case "while_rollback_pending":
      return rollbackPending(n);
    case "never":
      return false;
    default:
      return assertNever(use, "slot use");
  }
}

/**
 * True while a rollback sent to final node `n` after it ended may still be restarting its agent
 * onto its previous release: it was sent one (`rollbackOperationId`) and its outcome is not
 * recorded (`rollbackResult`, written for every such node of the batch when the batch's
 * rollback ends). As for a node rolling back, the slot lasts until Control judges the rollback,
 * not until its recorded `rollbackDeadline`: a Control that took over judges no deadline within
 * a reconnect timeout of becoming ready (`judgedDeadline`), and the agent may restart onto its
 * previous release meanwhile. A rollback withheld (`rollbackResult` rollback_withheld, no
 * operation) is none.
 */
export function rollbackPending(
  n: Pick<CampaignNode, "rollbackOperationId" | "rollbackResult">,
): boolean {
  return n.rollbackOperationId !== undefined && n.rollbackResult === undefined;
}

/**
 * True when campaign node `n` holds its node busy in `campaign`: no other campaign may start
 * over the node ({@link NodeStateTraits.busy}). Only an unfinished campaign holds nodes: the
 * node's state is busy whatever its batch, or the node is in the current batch of a campaign
 * that has not ended (that batch may still roll back and send it a rollback). A node that ended
 * in a campaign whose other nodes still run is free. The SQL adapter's equivalent is `busySql`.
 */
export function holdsNodeBusy(
  campaign: Pick<CampaignState, "phase" | "currentBatch" | "finishedAt">,
  n: Pick<CampaignNode, "state" | "batch">,
): boolean {
  if (campaign.finishedAt !== undefined) return false;
  if (NODE_STATE_TRAITS[n.state].busy) return true;
  return !isEndedPhase(campaign.phase) && n.batch === campaign.currentBatch;
}

/** True when a node no longer needs anything for its batch to pass: final, or past its grace. */
export function isSettled(n: CampaignNode, now: number): boolean {
  if (isFinal(n.state)) return true;
  return n.state === "verifying" && n.graceEndsAt !== undefined && n.graceEndsAt <= now;
}

/** When a settled node settled (final: finishedAt; verifying: end of grace). */
export function settledAt(n: CampaignNode): number | undefined {
  if (isFinal(n.state)) return n.finishedAt ?? n.stateChangedAt;
  return n.state === "verifying" ? n.graceEndsAt : undefined;
}

/** Slots of a batch: `concurrency`, or the whole batch when 0. */
export function concurrencyLimit(concurrency: number): number {
  return concurrency === 0 ? Number.POSITIVE_INFINITY : concurrency;
}

/**
 * How many nodes of a pool may be in flight at once: floor(poolSize × budget / 100), at least 1.
 * The pool size is the pool's enabled nodes in the whole fleet when the decision is given a
 * {@link PoolLoad} for it, else the campaign's nodes in that pool (all batches). The limit is the
 * pool's total over every campaign: the nodes in flight elsewhere count against it, so "at
 * least 1" is one for the pool, not one per campaign.
 */
export function poolLimit(poolSize: number, budgetPercent: number): number {
  return Math.max(1, Math.floor((poolSize * budgetPercent) / 100));
}

/** A batch's failure ratio terms. */
export interface BatchCounts {
  /** Nodes that failed or timed out. */
  readonly failed: number;
  /** Nodes not skipped (the denominator). */
  readonly offerable: number;
}

/** Counts a batch's failures and offerable nodes. */
export function countBatch(nodes: readonly CampaignNode[]): BatchCounts {
  let failed = 0;
  let offerable = 0;
  for (const n of nodes) {
    if (isFailure(n.state)) failed++;
    if (n.state !== "skipped") offerable++;
  }
  return { failed, offerable };
}

/**
 * True when failures exceed `threshold %` of the offerable nodes (strictly: 5 of 100 at 5 % is no
 * breach, 6 is) and exceed the failures an operator accepted by resuming after a pause.
 */
export function isBreached(
  counts: BatchCounts,
  thresholdPercent: number,
  accepted: number,
): boolean {
  return counts.failed > accepted && counts.failed * 100 > thresholdPercent * counts.offerable;
}

/**
 * The node whose failure breached the batch: failures in the order they happened (then canary
 * order), the first one past both the threshold and the accepted failures.
 */
export function breachingNode(
  nodes: readonly CampaignNode[],
  thresholdPercent: number,
  accepted: number,
): CampaignNode | undefined {
  const { offerable } = countBatch(nodes);
  const failures = nodes
    .filter((n) => isFailure(n.state))
    .sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0) || a.order - b.order);
  const allowed = Math.max(accepted, Math.floor((thresholdPercent * offerable) / 100));
  return failures[allowed] ?? failures[failures.length - 1];
}
