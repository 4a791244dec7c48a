/**
 * Judging the current batch and the campaign (internal to decide): breach, pass, next batch,
 * completion and finish. Stopping a batch (pause bookkeeping, cancel, rollback) is in
 * `rollback.ts`.
 */
import { assertNever } from "./assert-never.js";
import type { BatchCounts } from "./batch-rules.js";
import { breachingNode, elapsedMs, isBreached, isSettled, settledAt } from "./batch-rules.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  allFinal,
  annotateFinal,
  batchNodes,
  currentBatch,
  emit,
  tallyOf,
  updateBatch,
  updateCampaign,
  updateNode,
} from "./draft.js";
import { isEndedPhase } from "./model.js";
import { operationId } from "./operation-id.js";
import { cancelWaiting, closePause, startRollback } from "./rollback.js";

/** Re-exported for the admin commands. */
export { cancelWaiting, closePause, startRollback } from "./rollback.js";

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

/**
 * Passes the current batch when the campaign runs, the batch is running, every node settled,
 * its minimum duration elapsed (paused time excluded) and the soak after the last settle is
 * over; an empty batch passes at once. Passing makes its verifying nodes succeeded and confirms
 * them, confirms its nodes that were already on the target (already_current), then starts the
 * next batch (startedAt = now) or completes the campaign.
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
  confirmAlreadyCurrent(d, b.index);
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

/**
 * Confirms the passing batch's nodes that were already on the target (succeeded,
 * already_current) and were not confirmed yet: their agents may hold the target unconfirmed
 * (I3). Their state stays; the confirm is recorded with {@link annotateFinal}. One pass over the
 * batch, once, when it passes.
 */
function confirmAlreadyCurrent(d: Draft, batch: number): void {
  for (const n of batchNodes(d, batch)) {
    if (n.state !== "succeeded" || n.code !== "already_current") continue;
    if (n.confirmOperationId !== undefined) continue;
    const id = operationId(d.campaign.id, n.nodeId, "confirm");
    annotateFinal(d, n, { confirmOperationId: id }, "batch passed; confirmed");
    emit(d, {
      kind: "confirm",
      nodeId: n.nodeId,
      operationId: id,
      version: d.target.version,
      sequence: d.target.sequence,
    });
  }
}

/** Sets finishedAt once the phase has ended and every node is final. */
export function judgeFinish(d: Draft): void {
  const c = d.campaign;
  if (!isEndedPhase(c.phase) || c.finishedAt !== undefined) return;
  if (!allFinal(d)) return;
  updateCampaign(d, { finishedAt: d.now }, `finished (${c.phase})`);
  d.events.push({ kind: "finished", phase: c.phase });
}
