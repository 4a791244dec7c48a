/**
 * Stopping the current batch (internal to decide): closing a pause, canceling waiting nodes,
 * starting a rollback, judging each node told to roll back, and ending the rollback.
 */
import type { Draft } from "./draft.js";
import {
  activeNodes,
  allNodes,
  annotateFinal,
  batchNodes,
  currentBatch,
  emit,
  factsOf,
  judgedDeadline,
  tallyOf,
  updateBatch,
  updateCampaign,
  updateNode,
} from "./draft.js";
import type { CampaignNode, NodeCode, RollbackCause } from "./model.js";
import { isUpgrading } from "./model.js";
import { operationId } from "./operation-id.js";
import { detail, minutes, reportFor, sendFailureFor } from "./reports.js";

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
 * True for a FINAL node that runs or may still come to run the target: failed
 * config_apply_failed (back on it, its config failed), failed reconnect_timeout (announced a
 * restart or was still applying; may reach it yet) and timed_out (stopped heartbeating while
 * upgrading; may come back on it). A rollback must reach it too (I2).
 */
export function mayRunTarget(n: CampaignNode): boolean {
  switch (n.state) {
    case "timed_out":
      return true;
    case "failed":
      return n.code === "config_apply_failed" || n.code === "reconnect_timeout";
    default:
      return false;
  }
}

/**
 * Sends a rollback to the final nodes of `batch` that run or may run the target
 * ({@link mayRunTarget}) and were not sent one yet. Their states stay as they are (final states
 * never change); the rollback is recorded on them ({@link annotateFinal}). They do not hold up
 * the rollback's end: the outbox re-sends their rollback whenever they reconnect until the agent
 * reports on it. One pass over the batch, only when it has failures.
 */
function rollbackFinalNodes(d: Draft, batch: number, why: string): void {
  if (tallyOf(d, batch).failed === 0) return;
  for (const n of batchNodes(d, batch)) {
    if (!mayRunTarget(n) || n.rollbackOperationId !== undefined) continue;
    const id = operationId(d.campaign.id, n.nodeId, "rollback");
    annotateFinal(
      d,
      n,
      { rollbackOperationId: id, rollbackAt: d.now },
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
  rollbackFinalNodes(d, b.index, why);
  updateCampaign(
    d,
    { phase: "rolling_back", rollbackCause: cause },
    `rolling back batch ${b.index + 1}: ${why}`,
  );
  d.events.push({ kind: "rollback_started", batch: b.index, cause });
}

/**
 * Ends a rollback once no node of the batch is rolling back any more (final nodes sent a
 * rollback are not waited for): rolled_back when none ended rollback_failed, else failed.
 */
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
 * Judges a node told to roll back: REINSTATED (or CONFIRMED) on the rollback operation, or a new
 * boot id on its previous version, or its upgrade refused/failed while still on the previous
 * version → rolled_back; the rollback refused/failed or not deliverable → rollback_failed
 * (rollback_failed); not back by the deadline → rollback_failed (rollback_unconfirmed).
 */
export function judgeRollback(d: Draft, n: CampaignNode): void {
  const f = factsOf(d, n.nodeId);
  const sent = sendFailureFor(f, n.rollbackOperationId);
  if (sent !== undefined) {
    updateNode(
      d,
      n,
      {
        state: "rollback_failed",
        code: "rollback_failed",
        message: `could not send the rollback: ${sent.message}`,
      },
      "rollback not delivered",
    );
    return;
  }
  const r = reportFor(f, n.rollbackOperationId);
  if (r?.phase === "REINSTATED" || r?.phase === "CONFIRMED") {
    updateNode(
      d,
      n,
      {
        state: "rolled_back",
        version: n.previousVersion,
        message: `reinstated ${n.previousVersion ?? "its previous release"}`,
      },
      "rolled back",
    );
    return;
  }
  if (r?.phase === "REFUSED" || r?.phase === "FAILED") {
    updateNode(
      d,
      n,
      {
        state: "rollback_failed",
        code: "rollback_failed",
        message: `rollback ${r.phase === "REFUSED" ? "refused" : "failed"}: ${detail(r)}`,
      },
      "rollback failed",
    );
    return;
  }
  const onPrevious = f?.agentVersion !== undefined && f.agentVersion === n.previousVersion;
  const upgrade = reportFor(f, n.upgradeOperationId);
  const neverApplied = upgrade?.phase === "REFUSED" || upgrade?.phase === "FAILED";
  if (onPrevious && ((f?.bootId !== undefined && f.bootId !== n.rollbackBootId) || neverApplied)) {
    updateNode(
      d,
      n,
      { state: "rolled_back", version: f?.agentVersion, message: `back on ${n.previousVersion}` },
      "back on the previous version",
    );
    return;
  }
  if (n.rollbackDeadline !== undefined && d.now >= judgedDeadline(d, n.rollbackDeadline)) {
    updateNode(
      d,
      n,
      {
        state: "rollback_failed",
        code: "rollback_unconfirmed",
        message: `not confirmed back on ${n.previousVersion ?? "its previous release"} within ${minutes(d.campaign.spec.reconnectTimeoutMs)}`,
      },
      "rollback unconfirmed",
    );
  }
}
