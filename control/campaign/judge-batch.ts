/**
 * Judging the current batch and the campaign (internal to decide): breach, rollback, pass,
 * next batch, completion and finish.
 */
import { assertNever } from "./assert-never.js";
import type { BatchCounts } from "./batch-rules.js";
import { breachingNode, elapsedMs, isBreached, isSettled, settledAt } from "./batch-rules.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  allFinal,
  allNodes,
  batchNodes,
  currentBatch,
  emit,
  tallyOf,
  updateBatch,
  updateCampaign,
  updateNode,
} from "./draft.js";
import type { NodeCode, RollbackCause } from "./model.js";
import { isEndedPhase, isUpgrading } from "./model.js";
import { operationId } from "./operation-id.js";

/** Closes an open pause: its time goes to the current batch's `pausedMs`. */
export function closePause(d: Draft): void {
  const { pausedAt } = d.campaign;
  if (pausedAt === undefined) return;
  const b = currentBatch(d);
  const from = Math.max(pausedAt, b.startedAt ?? pausedAt);
  updateBatch(d, b.index, { pausedMs: b.pausedMs + Math.max(0, d.now - from) });
  updateCampaign(d, { pausedAt: undefined });
}

/** Cancels every waiting node of the campaign and every batch not started yet. */
export function cancelWaiting(d: Draft, code: NodeCode, message: string): void {
  for (const n of allNodes(d)) {
    if (n.state === "waiting") updateNode(d, n, { state: "canceled", code, message }, "canceled");
  }
  for (const b of d.campaign.batches) {
    if (b.state === "pending") updateBatch(d, b.index, { state: "canceled" });
  }
}

/**
 * Starts rolling back the current batch: phase rolling_back, waiting nodes canceled, and every
 * node of the batch that upgraded or is upgrading (offered … verifying) told to reinstate its
 * previous release (rolling_back, deadline = now + reconnect timeout).
 */
export function startRollback(d: Draft, cause: RollbackCause, why: string): void {
  closePause(d);
  cancelWaiting(d, cause === "breach" ? "batch_failed" : "aborted", `canceled: ${why}`);
  const b = currentBatch(d);
  for (const n of activeNodes(d, b.index)) {
    if (!isUpgrading(n.state)) continue;
    const id = operationId(d.campaign.id, n.nodeId, "rollback");
    updateNode(
      d,
      n,
      {
        state: "rolling_back",
        rollbackOperationId: id,
        rollbackAt: d.now,
        rollbackBootId: d.facts.get(n.nodeId)?.bootId,
        rollbackDeadline: d.now + d.campaign.spec.reconnectTimeoutMs,
      },
      "rolling back",
    );
    emit(d, {
      kind: "rollback",
      nodeId: n.nodeId,
      operationId: id,
      version: n.previousVersion,
      reason: why,
    });
  }
  updateCampaign(
    d,
    { phase: "rolling_back", rollbackCause: cause },
    `rolling back batch ${b.index + 1}: ${why}`,
  );
  d.events.push({ kind: "rollback_started", batch: b.index, cause });
}

/** A batch's failures and offerable nodes, from its tally. */
function countsOf(d: Draft, batch: number): BatchCounts {
  const tally = tallyOf(d, batch);
  const size = d.batchIndexes[batch]?.length ?? 0;
  return { failed: tally.failed, offerable: size - tally.skipped };
}

/**
 * Acts on a breach of the running current batch (running or paused campaign) per on_breach.
 * Runs after every rule that can add a failure or shrink the offerable nodes (judging nodes,
 * settling without an offer, skipping offline nodes), before a batch may pass.
 */
export function judgeBreach(d: Draft): void {
  const c = d.campaign;
  if (c.phase !== "running" && c.phase !== "paused") return;
  const b = currentBatch(d);
  if (b.state !== "running") return;
  const counts = countsOf(d, b.index);
  const threshold = c.spec.failureThresholdPercent;
  if (!isBreached(counts, threshold, b.acceptedFailures)) return;
  const stopper = breachingNode(batchNodes(d, b.index), threshold, b.acceptedFailures);
  const why = `${counts.failed} of ${counts.offerable} nodes of batch ${b.index + 1} failed (threshold ${threshold} %)`;
  updateBatch(d, b.index, { state: "breached" });
  updateCampaign(d, { code: "batch_failed", message: why, stoppedByNodeId: stopper?.nodeId });
  d.events.push({
    kind: "breached",
    batch: b.index,
    failed: counts.failed,
    offerable: counts.offerable,
    stoppedByNodeId: stopper?.nodeId,
  });
  switch (c.spec.onBreach) {
    case "rollback":
      startRollback(d, "breach", why);
      return;
    case "pause":
      if (c.phase === "running")
        updateCampaign(d, { phase: "paused", pausedAt: d.now }, `paused: ${why}`);
      return;
    case "stop":
      closePause(d);
      cancelWaiting(d, "batch_failed", `canceled: ${why}`);
      updateBatch(d, b.index, { endedAt: d.now });
      updateCampaign(d, { phase: "failed" }, `stopped: ${why}`);
      return;
    default:
      assertNever(c.spec.onBreach, "on_breach");
  }
}

/** Ends a rollback once no node of the batch is rolling back any more. */
export function judgeRollbackEnd(d: Draft): void {
  if (d.campaign.phase !== "rolling_back") return;
  const b = currentBatch(d);
  if (activeNodes(d, b.index).some((n) => n.state === "rolling_back")) return;
  const failed = batchNodes(d, b.index).filter((n) => n.state === "rollback_failed");
  const cause = d.campaign.rollbackCause ?? "breach";
  if (failed.length === 0) {
    updateBatch(d, b.index, { state: "rolled_back", endedAt: d.now });
    updateCampaign(
      d,
      { phase: "rolled_back", code: cause === "breach" ? "batch_failed" : "aborted" },
      `batch ${b.index + 1} rolled back`,
    );
    return;
  }
  const code = failed.some((n) => n.code === "rollback_failed")
    ? "rollback_failed"
    : "rollback_unconfirmed";
  updateBatch(d, b.index, { endedAt: d.now });
  updateCampaign(
    d,
    {
      phase: "failed",
      code,
      message: `${failed.length} node(s) of batch ${b.index + 1} could not be confirmed back on their previous release`,
    },
    `rollback of batch ${b.index + 1} ended with ${failed.length} failure(s)`,
  );
}

/**
 * Passes the current batch when the campaign runs, the batch is running, every node settled,
 * its minimum duration elapsed (paused time excluded) and the soak after the last settle is
 * over; an empty batch passes at once. Passing makes its verifying nodes succeeded and confirms
 * them, then starts the next batch (startedAt = now) or completes the campaign.
 * @throws when the batch's failures exceed its threshold: a breach must have been acted on
 * (judgeBreach) before; passing a breached batch is impossible whatever the order of rules (I1).
 */
export function judgePass(d: Draft): void {
  const c = d.campaign;
  if (c.phase !== "running") return;
  const b = currentBatch(d);
  if (b.state !== "running") return;
  const size = d.batchIndexes[b.index]?.length ?? 0;
  const active = activeNodes(d, b.index);
  if (size > 0) {
    const tally = tallyOf(d, b.index);
    if (tally.waiting > 0 || !active.every((n) => isSettled(n, d.now))) return;
    let settled = tally.lastFinalSettle ?? Number.NEGATIVE_INFINITY;
    for (const n of active) settled = Math.max(settled, settledAt(n) ?? d.now);
    if (b.settledAt !== settled) updateBatch(d, b.index, { settledAt: settled });
    if (elapsedMs(b, c.pausedAt, d.now) < b.minDurationMs) return;
    if (d.now < settled + c.spec.soakMs) return;
  }
  const counts = countsOf(d, b.index);
  if (isBreached(counts, c.spec.failureThresholdPercent, b.acceptedFailures)) {
    throw new Error(
      `campaign ${c.id}: refusing to pass batch ${b.index + 1}: ${counts.failed} of ${counts.offerable} nodes failed (threshold ${c.spec.failureThresholdPercent} %)`,
    );
  }
  for (const n of active) {
    if (n.state !== "verifying") continue;
    const id = operationId(c.id, n.nodeId, "confirm");
    updateNode(
      d,
      n,
      { state: "succeeded", confirmOperationId: id, message: `on ${d.target.version}, confirmed` },
      "batch passed",
    );
    emit(d, {
      kind: "confirm",
      nodeId: n.nodeId,
      operationId: id,
      version: d.target.version,
      sequence: d.target.sequence,
    });
  }
  updateBatch(d, b.index, { state: "passed", endedAt: d.now });
  d.events.push({ kind: "batch_passed", batch: b.index });
  const next = c.batches[b.index + 1];
  if (next === undefined) {
    updateCampaign(
      d,
      { phase: "completed", code: undefined, message: undefined },
      "every batch passed",
    );
    return;
  }
  updateCampaign(
    d,
    { currentBatch: next.index },
    `batch ${b.index + 1} passed; batch ${next.index + 1} starts`,
  );
  updateBatch(d, next.index, { state: "running", startedAt: d.now });
  d.events.push({ kind: "batch_started", batch: next.index });
}

/** Sets finishedAt once the phase has ended and every node is final. */
export function judgeFinish(d: Draft): void {
  const c = d.campaign;
  if (!isEndedPhase(c.phase) || c.finishedAt !== undefined) return;
  if (!allFinal(d)) return;
  updateCampaign(d, { finishedAt: d.now }, `finished (${c.phase})`);
  d.events.push({ kind: "finished", phase: c.phase });
}
