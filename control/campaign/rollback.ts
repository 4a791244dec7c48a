/**
 * Stopping the current batch (internal to decide): closing a pause, canceling waiting nodes,
 * starting a rollback, judging each node told to roll back, and ending the rollback.
 */
import { assertNever } from "./assert-never.js";
import { resumeTakenDelivery } from "./deferral.js";
import type { Draft } from "./draft.js";
import {
  activeNodes,
  allNodes,
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
import { leaveLateRollbacks } from "./late-rollback.js";
import type { CampaignNode, NodeCode, RollbackCause } from "./model.js";
import { isUpgrading } from "./model.js";
import { NODE_STATE_TRAITS } from "./node-state-traits.js";
import { operationId } from "./operation-id.js";
import { noteRollbackRestart, type RollbackVerdict, rollbackVerdict } from "./rollback-verdict.js";
import { closedMsBetween } from "./windows.js";

/**
 * Closes an open pause: its time goes to the current batch's `pausedMs`, and the part of it
 * outside every window to its `pausedClosedMs`.
 */
export function closePause(d: Draft): void {
  const { pausedAt } = d.campaign;
  if (pausedAt === undefined) return;
  const b = currentBatch(d);
  const from = Math.max(pausedAt, b.startedAt ?? pausedAt);
  const closed = closedMsBetween(d.campaign.spec.windows, from, d.now);
  updateBatch(d, b.index, {
    pausedMs: b.pausedMs + Math.max(0, d.now - from),
    ...(closed > 0 ? { pausedClosedMs: (b.pausedClosedMs ?? 0) + closed } : {}),
  });
  updateCampaign(d, { pausedAt: undefined });
}

/**
 * Cancels every waiting node of the campaign and every batch not started yet, but a deferred
 * node of the current batch whose Agent took a later delivery of its offer
 * ({@link resumeTakenDelivery}): that one is in flight again (a rollback of the batch reaches
 * it), even when this decision sees its progress and the stop at once.
 */
export function cancelWaiting(d: Draft, code: NodeCode, message: string): void {
  const current = d.campaign.currentBatch;
  for (const n of allNodes(d)) {
    if (n.state !== "waiting") continue;
    if (n.batch === current && resumeTakenDelivery(d, n)) continue;
    updateNode(d, n, { state: "canceled", code, message }, "canceled");
  }
  for (const b of d.campaign.batches) {
    if (b.state === "pending") updateBatch(d, b.index, { state: "canceled" });
  }
}

/**
 * True for a FINAL node that runs or may still come to run the target: failed
 * config_apply_failed (back on it, its config failed), failed lost_after_upgrade (back on it,
 * then gone), failed reconnect_timeout (announced a restart or was still applying; may reach
 * it yet) and timed_out (stopped heartbeating while upgrading; may come back on it); and any
 * node this campaign offered the upgrade whose latest Hello is on the target, whatever its
 * state and code say (one that reported FAILED and came back on the target after all). A
 * rollback must reach it too (I2). Nodes rolled back or rolling back say so by their state.
 */
export function mayRunTarget(d: Draft, n: CampaignNode): boolean {
  switch (n.state) {
    case "timed_out":
      return true;
    case "failed":
      if (
        n.code === "config_apply_failed" ||
        n.code === "lost_after_upgrade" ||
        n.code === "reconnect_timeout"
      )
        return true;
      return reportsTarget(d, n);
    case "skipped":
    case "canceled":
      return reportsTarget(d, n);
    case "waiting":
    case "offered":
    case "applying":
    case "restarting":
    case "verifying":
    case "succeeded":
    case "rolling_back":
    case "rolled_back":
    case "rollback_failed":
      return false;
    default:
      return assertNever(n.state, "node state");
  }
}

/** True for a node offered the upgrade by this campaign whose latest Hello is on the target. */
function reportsTarget(d: Draft, n: CampaignNode): boolean {
  return (
    n.upgradeOperationId !== undefined && factsOf(d, n.nodeId)?.agentVersion === d.target.version
  );
}

/**
 * The yank of `n`'s previous release when it was yanked (`Draft.yankedPrevious`): a rollback
 * would reinstall a yanked release, so none is sent to it; it stays on the target, named.
 */
function yankedPrevious(d: Draft, n: CampaignNode): { readonly reason: string } | undefined {
  return n.previousVersion === undefined ? undefined : d.yankedPrevious.get(n.previousVersion);
}

function withheldMessage(n: CampaignNode, yank: { readonly reason: string }): string {
  return `rollback withheld: its previous release ${n.previousVersion} was yanked (${yank.reason}); it stays on the target`;
}

/**
 * Sends a rollback to the final nodes of `batch` that run or may run the target
 * ({@link mayRunTarget}) and were not sent one yet. Their states stay as they are (final states
 * never change); the rollback, its boot id and its deadline are recorded on them
 * ({@link annotateFinal}), and the rollback's end waits for its outcome ({@link awaitsRollback}).
 * The outbox re-sends their rollback whenever they reconnect until the agent reports on it. One
 * pass over the batch, only when it has a final node that may run the target (failed,
 * timed_out, skipped or canceled: an abort or a yank rolls back a batch without failures, and
 * a node it canceled may yet come back on the target): when the rollback starts, and every
 * round while it runs (a node's Hello on the target may come later).
 */
function rollbackFinalNodes(d: Draft, batch: number, why: string): void {
  const t = tallyOf(d, batch);
  if (t.failed + t.skipped + t.canceled === 0) return;
  for (const n of batchNodes(d, batch)) {
    if (n.rollbackOperationId !== undefined || n.rollbackResult !== undefined) continue;
    if (!mayRunTarget(d, n) && n.code !== "rollback_withheld") continue;
    const yank = yankedPrevious(d, n);
    if (yank !== undefined) {
      annotateFinal(d, n, { rollbackResult: "rollback_withheld" }, withheldMessage(n, yank));
      continue;
    }
    if (!mayRunTarget(d, n)) continue;
    const id = operationId(d.campaign.id, n.nodeId, "rollback");
    annotateFinal(
      d,
      n,
      {
        rollbackOperationId: id,
        rollbackAt: d.now,
        rollbackBootId: d.facts.get(n.nodeId)?.bootId,
        rollbackDeadline: d.now + d.campaign.spec.reconnectTimeoutMs,
      },
      `rollback sent (${n.code ?? n.state}; state kept)`,
    );
    emit(d, {
      kind: "rollback",
      nodeId: n.nodeId,
      operationId: id,
      version: n.previousVersion,
      reason: why,
    });
  }
}

/**
 * Starts rolling back the current batch: phase rolling_back, waiting nodes canceled, every node
 * of the batch that upgraded or is upgrading (offered … verifying) told to reinstate its
 * previous release (rolling_back, deadline = now + reconnect timeout), and every final node of
 * the batch that runs or may run the target sent the same rollback, its state kept
 * ({@link rollbackFinalNodes}).
 */
export function startRollback(d: Draft, cause: RollbackCause, why: string): void {
  closePause(d);
  const canceledAs =
    cause !== "breach" ? "aborted" : d.yanked !== undefined ? "release_yanked" : "batch_failed";
  cancelWaiting(d, canceledAs, `canceled: ${why}`);
  const b = currentBatch(d);
  for (const n of activeNodes(d, b.index)) {
    if (!isUpgrading(n.state)) continue;
    const yank = yankedPrevious(d, n);
    if (yank !== undefined) {
      // Never back onto a yanked release: it ends failed, on or bound for the target, named.
      updateNode(
        d,
        n,
        { state: "failed", code: "rollback_withheld", message: withheldMessage(n, yank) },
        "rollback withheld (previous release yanked)",
      );
      continue;
    }
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
  rollbackFinalNodes(d, b.index, why);
  updateCampaign(
    d,
    { phase: "rolling_back", rollbackCause: cause },
    `rolling back batch ${b.index + 1}: ${why}`,
  );
  d.events.push({ kind: "rollback_started", batch: b.index, cause });
}

/**
 * True for a FINAL node that was sent its batch's rollback because it may run the target
 * ({@link mayRunTarget}), its state kept: the rollback's end waits for that rollback's outcome.
 * Read from the record alone (the worker asks it without facts): a rollback operation on a node
 * whose state is a `while_rollback_pending` row of the traits table (the final states a
 * rollback is sent to with the state kept); a node that was rolling back says its outcome by its
 * state instead (rolled_back, rollback_failed hold no slot).
 */
export function awaitsRollback(n: CampaignNode): boolean {
  return (
    n.rollbackOperationId !== undefined &&
    NODE_STATE_TRAITS[n.state].holdsSlot === "while_rollback_pending"
  );
}

/** How many node ids a campaign message names before it says how many more. */
const NAMED = 5;

function named(ids: readonly string[]): string {
  const shown = ids.slice(0, NAMED).join(", ");
  return ids.length > NAMED ? `${shown} and ${ids.length - NAMED} more` : shown;
}

/**
 * First sends the rollback to any final node that may now run the target and was not sent it
 * ({@link rollbackFinalNodes}: a Hello on the target that came after the rollback started).
 * Ends a rollback once every node of the batch sent one has an outcome: no node is rolling back
 * any more, and each final node that may run the target ({@link awaitsRollback}) is judged back
 * or failed by {@link rollbackVerdict} (its state kept). Until then the campaign stays
 * rolling_back, so its nodes stay busy. Every node back: rolled_back (the breach's code, else
 * batch_failed) after a breach, aborted (code aborted, the message saying the batch rolled back)
 * after an operator's abort. Each such final node records its own outcome (`rollbackResult`),
 * since the message names at most five. Otherwise failed whatever the cause, code
 * rollback_failed when any rollback failed, else
 * rollback_unconfirmed, the message naming them.
 */
export function judgeRollbackEnd(d: Draft): void {
  if (d.campaign.phase !== "rolling_back") return;
  const b = currentBatch(d);
  // A final node seen on the target since the rollback started is sent it too.
  rollbackFinalNodes(d, b.index, d.campaign.message ?? "rolling back");
  // A final node's agent restarting onto its previous release: its deadline counts from now.
  const t = tallyOf(d, b.index);
  if (t.failed + t.skipped + t.canceled > 0) {
    for (const n of batchNodes(d, b.index)) if (awaitsRollback(n)) noteRollbackRestart(d, n);
  }
  if (activeNodes(d, b.index).some((n) => n.state === "rolling_back")) return;
  const failed: { readonly nodeId: string; readonly code: string }[] = [];
  const finals: { readonly node: CampaignNode; readonly verdict: RollbackVerdict }[] = [];
  for (const n of batchNodes(d, b.index)) {
    if (n.state === "rollback_failed") {
      failed.push({ nodeId: n.nodeId, code: n.code ?? "rollback_failed" });
      continue;
    }
    if (!awaitsRollback(n)) continue;
    const v: RollbackVerdict | undefined = rollbackVerdict(d, n);
    if (v === undefined) return;
    finals.push({ node: n, verdict: v });
    if (v.kind === "failed") failed.push({ nodeId: n.nodeId, code: v.code });
  }
  // Each final node says its own outcome: the message names only the first few.
  for (const { node, verdict } of finals) {
    const result = verdict.kind === "back" ? "rolled_back" : verdict.code;
    annotateFinal(d, node, { rollbackResult: result }, `rollback ${result}: ${verdict.message}`);
  }
  // The rollback ends: a node that said it failed may yet say Hello on the target (late-rollback.ts).
  leaveLateRollbacks(d, b.index, d.campaign.message ?? "rolled back");
  const cause = d.campaign.rollbackCause ?? "breach";
  if (failed.length === 0) {
    updateBatch(d, b.index, { state: "rolled_back", endedAt: d.now });
    if (cause === "breach") {
      // The breach's own code stays (a batch's threshold, the failure budget, a yank).
      const withheld = batchNodes(d, b.index)
        .filter((n) => n.rollbackResult === "rollback_withheld")
        .map((n) => n.nodeId);
      updateCampaign(
        d,
        {
          phase: "rolled_back",
          code: d.campaign.code ?? "batch_failed",
          ...(withheld.length === 0
            ? {}
            : {
                message: `${d.campaign.message ?? "breached"}; rollback withheld from ${withheld.length} node(s) whose previous release is yanked (they stay on the target): ${named(withheld)}`,
              }),
        },
        `batch ${b.index + 1} rolled back`,
      );
      return;
    }
    // An operator's abort ends aborted: rolled_back says a batch breached.
    const why = d.campaign.message ?? "aborted by an operator";
    updateCampaign(
      d,
      { phase: "aborted", code: "aborted", message: `${why}; batch ${b.index + 1} rolled back` },
      `aborted; batch ${b.index + 1} rolled back`,
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
      message: `${failed.length} node(s) of batch ${b.index + 1} could not be confirmed back on their previous release: ${named(failed.map((n) => n.nodeId))}`,
    },
    `rollback of batch ${b.index + 1} ended with ${failed.length} failure(s)`,
  );
}
