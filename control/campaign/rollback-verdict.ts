/**
 * What a node's facts say about the rollback it was sent (internal to decide): one rule for a
 * node rolling back and for a final node sent its batch's rollback (its state kept).
 */
import { defersCurrentOffer } from "./deferral.js";
import type { Draft } from "./draft.js";
import { factsOf, judgedDeadline, updateNode } from "./draft.js";
import { annotateFinal } from "./draft-annotate.js";
import type { CampaignNode } from "./model.js";
import { isFinal } from "./model.js";
import { detail, minutes, reportFor, sendFailureFor } from "./reports.js";

/** The outcome of a rollback, once the facts settle it. */
export type RollbackVerdict =
  | {
      readonly kind: "back";
      /** The version it is known to run again. */
      readonly version: string | undefined;
      readonly message: string;
      readonly reason: string;
    }
  | {
      readonly kind: "failed";
      readonly code: "rollback_failed" | "rollback_unconfirmed";
      readonly message: string;
      readonly reason: string;
    };

/**
 * The rollback deadline of node `n`: a reconnect timeout after the rollback was sent
 * (`rollbackDeadline`), or after the leader first judged the agent's report that it restarts
 * onto its previous release ({@link noteRollbackRestart}) when that is later. An agent away when
 * the rollback was sent gets it re-sent when it comes back, and restarts then; the deadline is
 * a time to come back. Undefined when no rollback was sent.
 */
export function rollbackDeadlineOf(d: Draft, n: CampaignNode): number | undefined {
  if (n.rollbackDeadline === undefined) return undefined;
  const restarted = n.rollbackRestartedAt;
  return restarted === undefined
    ? n.rollbackDeadline
    : Math.max(n.rollbackDeadline, restarted + d.campaign.spec.reconnectTimeoutMs);
}

/**
 * Records when the leader first judges the agent's RESTARTING on node `n`'s rollback
 * (`rollbackRestartedAt` = now, once; a final node keeps its state, {@link annotateFinal}).
 * Returns the node as it is now.
 */
export function noteRollbackRestart(d: Draft, n: CampaignNode): CampaignNode {
  if (n.rollbackOperationId === undefined || n.rollbackRestartedAt !== undefined) return n;
  if (n.rollbackResult !== undefined) return n;
  if (reportFor(factsOf(d, n.nodeId), n.rollbackOperationId)?.phase !== "RESTARTING") return n;
  const patch = { rollbackRestartedAt: d.now };
  const why = "restarting onto its previous release: the rollback's deadline counts from now";
  return isFinal(n.state) ? annotateFinal(d, n, patch, why) : updateNode(d, n, patch, why);
}

/**
 * The rollback's outcome for node `n` (sent `rollbackOperationId` at `rollbackAt`, with
 * `rollbackBootId` and `rollbackDeadline`), or undefined while it is still open. Back: REINSTATED
 * (or CONFIRMED) on the rollback operation unless a newer Hello (from another boot than the
 * report's) is on the target, or its previous version with a boot id other than the
 * one it had when sent the rollback (or, when that is unknown, when offered), or its previous version while its upgrade was refused or
 * failed (it never left it). Failed (rollback_failed): the rollback could not be delivered, or was
 * refused or failed. Failed (rollback_unconfirmed): none of that by the rollback deadline (never
 * judged within a reconnect timeout of this Control becoming ready).
 */
export function rollbackVerdict(d: Draft, n: CampaignNode): RollbackVerdict | undefined {
  const f = factsOf(d, n.nodeId);
  const sent = sendFailureFor(f, n.rollbackOperationId);
  if (sent !== undefined) {
    return {
      kind: "failed",
      code: "rollback_failed",
      message: `could not send the rollback: ${sent.message}`,
      reason: "rollback not delivered",
    };
  }
  const r = reportFor(f, n.rollbackOperationId);
  // A Hello on the target from a boot other than the report's came after it: the node runs the
  // target again (or never left it), whatever the report said.
  const helloSaysTarget =
    f?.bootId !== undefined &&
    f.bootId !== r?.bootId &&
    f.agentVersion === d.target.version &&
    f.agentVersion !== n.previousVersion;
  if ((r?.phase === "REINSTATED" || r?.phase === "CONFIRMED") && !helloSaysTarget) {
    return {
      kind: "back",
      version: n.previousVersion,
      message: `reinstated ${n.previousVersion ?? "its previous release"}`,
      reason: "rolled back",
    };
  }
  if (r?.phase === "REFUSED" || r?.phase === "FAILED") {
    return {
      kind: "failed",
      code: "rollback_failed",
      message: `rollback ${r.phase === "REFUSED" ? "refused" : "failed"}: ${detail(r)}`,
      reason: "rollback failed",
    };
  }
  const onPrevious = f?.agentVersion !== undefined && f.agentVersion === n.previousVersion;
  const upgrade = reportFor(f, n.upgradeOperationId);
  // REFUSED, FAILED, or DEFERRED answering the offer it was sent last: the Agent applied
  // nothing of it (a DEFERRED from before that offer answered an earlier one, and says nothing).
  const neverApplied =
    upgrade?.phase === "REFUSED" ||
    upgrade?.phase === "FAILED" ||
    (upgrade !== undefined && defersCurrentOffer(n, upgrade));
  // The boot it had when sent the rollback, else (its facts were not at hand then) when offered:
  // a registry row still naming that boot is the Hello from before the upgrade, not a return.
  const sentBoot = n.rollbackBootId ?? n.offerBootId;
  const rebooted = f?.bootId !== undefined && sentBoot !== undefined && f.bootId !== sentBoot;
  if (onPrevious && (rebooted || neverApplied)) {
    return {
      kind: "back",
      version: f?.agentVersion,
      message: `back on ${n.previousVersion}`,
      reason: "back on the previous version",
    };
  }
  const deadline = rollbackDeadlineOf(d, n);
  if (deadline !== undefined && d.now >= judgedDeadline(d, deadline)) {
    return {
      kind: "failed",
      code: "rollback_unconfirmed",
      message: `not confirmed back on ${n.previousVersion ?? "its previous release"} within ${minutes(d.campaign.spec.reconnectTimeoutMs)}`,
      reason: "rollback unconfirmed",
    };
  }
  return undefined;
}

/**
 * Judges a node rolling back by {@link rollbackVerdict}: back → rolled_back; failed →
 * rollback_failed with the verdict's code; open → unchanged.
 */
export function judgeRollback(d: Draft, node: CampaignNode): void {
  const n = noteRollbackRestart(d, node);
  const v = rollbackVerdict(d, n);
  if (v === undefined) return;
  if (v.kind === "back") {
    updateNode(d, n, { state: "rolled_back", version: v.version, message: v.message }, v.reason);
    return;
  }
  updateNode(d, n, { state: "rollback_failed", code: v.code, message: v.message }, v.reason);
}
