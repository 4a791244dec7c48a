/**
 * Judging the current batch and the campaign (internal to decide): breach, pass, next batch,
 * completion and finish. Stopping a batch (pause bookkeeping, cancel, rollback) is in
 * `rollback.ts`.
 */
import { assertNever } from "./assert-never.js";
import type { BatchCounts } from "./batch-rules.js";
import {
  breachingNode,
  countedMs,
  isBreached,
  isSettled,
  settledAt,
  soakedMs,
} from "./batch-rules.js";
import { limitBreach } from "./campaign-limits.js";
import { type CarryOverPlan, carryOver, carryOverPlan, NO_CARRY } from "./carry-over.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  allFinal,
  batchNodes,
  currentBatch,
  emit,
  factsOf,
  tallyOf,
  updateBatch,
  updateCampaign,
  updateNode,
} from "./draft.js";
import { annotateFinal } from "./draft-annotate.js";
import { sampleOf } from "./failure-budget.js";
import { failingGate, passingResults } from "./gate-rules.js";
import { gateLabel, gateResultText } from "./gates.js";
import { type BatchRecord, type CampaignCode, type GateEvidence, isEndedPhase } from "./model.js";
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
 * Acts on a breach of the running current batch (running or paused campaign) per on_breach:
 * more failed nodes than its threshold; a campaign-level limit (`campaign-limits.ts`: the
 * target yanked, the failure budget over every batch, the minimum sample), each with its own
 * campaign code; or — once it settled — a gate whose counting result fails (`gate-rules.ts`). Runs after every rule that can add a failure or shrink the offerable
 * nodes (judging nodes, settling without an offer, skipping offline nodes), before a batch may
 * pass.
 */
export function judgeBreach(d: Draft): void {
  const c = d.campaign;
  if (c.phase !== "running" && c.phase !== "paused") return;
  const b = currentBatch(d);
  if (b.state !== "running") return;
  const counts = countsOf(d, b.index);
  const threshold = c.spec.failureThresholdPercent;
  let why: string;
  let stopper: string | undefined;
  let gate: number | undefined;
  let code: CampaignCode = "batch_failed";
  // A yanked target stops the campaign as release_yanked whatever else breached with it.
  const overThreshold = d.yanked === undefined && isBreached(counts, threshold, b.acceptedFailures);
  const limit = overThreshold ? undefined : limitBreach(d);
  if (overThreshold) {
    stopper = breachingNode(batchNodes(d, b.index), threshold, b.acceptedFailures)?.nodeId;
    why = `${counts.failed} of ${counts.offerable} nodes of batch ${b.index + 1} failed (threshold ${threshold} %)`;
  } else if (limit !== undefined) {
    ({ code, why } = limit);
    stopper = limit.stoppedByNodeId;
  } else {
    const failing = failingGate(c, b, d.gateResults, d.now, d.readyAt);
    if (failing === undefined) return;
    gate = failing.gate;
    const label = gateLabel(c.spec.gates ?? [], failing.gate);
    const what =
      failing.status === "unreachable"
        ? `unreachable for ${Math.round((d.now - (failing.unreachableSince ?? failing.at)) / 1000)} s (grace ${Math.round((c.spec.gateGraceMs ?? 0) / 1000)} s): ${failing.message}`
        : gateResultText(failing.message, failing.value);
    why = `${label} of batch ${b.index + 1} failed: ${what}`;
    d.events.push({
      kind: "gate",
      batch: b.index,
      gate: failing.gate,
      label,
      status: failing.status,
      value: failing.value,
      message: failing.message,
    });
  }
  updateBatch(d, b.index, { state: "breached" });
  updateCampaign(d, { code, message: why, stoppedByNodeId: stopper });
  d.events.push({
    kind: "breached",
    batch: b.index,
    failed: counts.failed,
    offerable: counts.offerable,
    stoppedByNodeId: stopper,
    ...(gate === undefined ? {} : { gate }),
    ...(code === "batch_failed" ? {} : { code }),
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
      cancelWaiting(d, code === "release_yanked" ? code : "batch_failed", `canceled: ${why}`);
      updateBatch(d, b.index, { endedAt: d.now });
      updateCampaign(d, { phase: "failed" }, `stopped: ${why}`);
      return;
    default:
      assertNever(c.spec.onBreach, "on_breach");
  }
}

/**
 * True while a node is not online (its stream gone, reconnecting or offline; without facts:
 * offline, nothing known): what it runs now is unknown. After a restart or takeover every node
 * is so until it reconnects, so a batch never passes on what its nodes ran before Control lost
 * their streams (one may have reverted meanwhile); and a verifying node that went away after
 * coming back on the target holds the pass until it is back or lost (`judge-away.ts`).
 */
function away(d: Draft, nodeId: string): boolean {
  return factsOf(d, nodeId)?.online !== true;
}

/**
 * True when the batch has fewer nodes settled after an offer than `--min-canaries` asks
 * (`failure-budget.ts`) and no operator accepted that by resuming it after a pause.
 */
function shortOfSample(d: Draft, b: BatchRecord): boolean {
  const min = d.campaign.spec.minCanaries;
  if (min === undefined || b.gatesAcceptedAt !== undefined) return false;
  const sample = sampleOf(batchNodes(d, b.index), min, d.now);
  return sample.settled < sample.required;
}

/**
 * Passes the current batch when the campaign runs, the batch is running, every node settled
 * (but nodes still deferring that carry over to the next batch, `carryOverPlan`: the batch is then
 * judged without them, and waits for them if that breaches its threshold), its minimum duration elapsed (paused time and time outside the maintenance windows excluded),
 * the soak after the last settle is over (time outside the windows excluded), every verifying
 * node is online (one away holds the pass until it is back or lost), the minimum sample settled (`--min-canaries`),
 * the target is not yanked, and every gate's counting result holds
 * (results taken since this Control took the lead); an empty batch passes at once. Passing makes
 * its verifying nodes succeeded and confirms them, confirms its nodes that were already on the target (already_current), then starts the
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
  let carry: CarryOverPlan = NO_CARRY;
  if (size > 0) {
    if (!active.every((n) => isSettled(n, d.now))) return;
    // Nodes still waiting hold the pass, unless all of them are deferring and may carry over
    // to the next batch (`carry-over.ts`): then the batch passes on its other nodes.
    const plan = carryOverPlan(d, b);
    if (plan === undefined) return;
    carry = plan;
    const tally = tallyOf(d, b.index);
    let settled = tally.lastFinalSettle ?? Number.NEGATIVE_INFINITY;
    for (const n of active) settled = Math.max(settled, settledAt(n) ?? d.now);
    if (b.settledAt !== settled) updateBatch(d, b.index, { settledAt: settled });
    if (countedMs(b, c.pausedAt, d.now, c.spec.windows) < b.minDurationMs) return;
    if (soakedMs(settled, d.now, c.spec.windows) < c.spec.soakMs) return;
    if (active.some((n) => n.state === "verifying" && away(d, n.nodeId))) return;
    if (shortOfSample(d, b)) return;
  }
  if (d.yanked !== undefined) return;
  const counts = countsOf(d, b.index);
  // The batch is judged on the nodes it keeps: without those it carries over it must stay within
  // its threshold (1 failed of 20 at 5 % is, 1 of 19 is not), else it waits for them.
  const kept = { failed: counts.failed, offerable: counts.offerable - carry.carried.length };
  if (
    carry.carried.length > 0 &&
    isBreached(kept, c.spec.failureThresholdPercent, b.acceptedFailures)
  )
    return;
  if (isBreached(counts, c.spec.failureThresholdPercent, b.acceptedFailures)) {
    throw new Error(
      `campaign ${c.id}: refusing to pass batch ${b.index + 1}: ${counts.failed} of ${counts.offerable} nodes failed (threshold ${c.spec.failureThresholdPercent} %)`,
    );
  }
  let evidence: GateEvidence[] | undefined;
  if (size > 0 && (c.spec.gates?.length ?? 0) > 0) {
    const batch = currentBatch(d);
    if (failingGate(c, batch, d.gateResults, d.now, d.readyAt) !== undefined) {
      throw new Error(`campaign ${c.id}: refusing to pass batch ${b.index + 1}: a gate fails`);
    }
    const held = passingResults(c, batch, d.gateResults, d.readyAt);
    if (held === undefined) return;
    evidence = held.map((r) => ({ gate: r.gate, at: r.at, value: r.value }));
    for (const gate of batch.skippedGates ?? [])
      evidence.push({ gate, at: d.now, value: "skipped by an operator", skipped: true });
    evidence.sort((x, y) => x.gate - y.gate);
    for (const r of held) {
      d.events.push({
        kind: "gate",
        batch: b.index,
        gate: r.gate,
        label: gateLabel(c.spec.gates ?? [], r.gate),
        status: "pass",
        value: r.value,
        message: r.message,
      });
    }
  }
  carryOver(d, carry);
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
  updateBatch(d, b.index, {
    state: "passed",
    endedAt: d.now,
    ...(evidence === undefined ? {} : { gateEvidence: evidence }),
  });
  d.events.push({
    kind: "batch_passed",
    batch: b.index,
    ...(carry.carried.length === 0 ? {} : { carriedOver: carry.carried.length }),
  });
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

/**
 * Sets finishedAt once the phase has ended and every node is final; the finish event names the
 * batch that was rolled back, if one was (after a breach or an abort with rollback).
 */
export function judgeFinish(d: Draft): void {
  const c = d.campaign;
  if (!isEndedPhase(c.phase) || c.finishedAt !== undefined) return;
  if (!allFinal(d)) return;
  updateCampaign(d, { finishedAt: d.now }, `finished (${c.phase})`);
  const b = currentBatch(d);
  d.events.push({
    kind: "finished",
    phase: c.phase,
    ...(c.rollbackCause !== undefined && b.state === "rolled_back"
      ? { rolledBackBatch: b.index }
      : {}),
  });
}
