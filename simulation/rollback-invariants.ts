/**
 * The rollback invariants, judged from the simulated world's ground truth (`ground-truth.ts`)
 * against what a campaign that rolled a batch back says (`outcome-invariants.ts` runs them):
 *
 * - O1: a campaign that says `rolled_back` has every node of the breached batch that took its
 *   upgrade running the version it ran before (when it says so, and at the end unless another
 *   campaign took the node since); one that says `failed` (rollback_failed /
 *   rollback_unconfirmed) names every such node that is not back.
 * - I2 (ground truth): when a rolled-back campaign finishes, every agent of the batch that ran
 *   its target after its upgrade was sent a rollback, is named as not rolled back, or was back
 *   on its previous release by itself (on a stream opened on it) before the rollback began, or
 *   failed the target's health checks and was taken back to its previous version by its own
 *   supervisor (off the target since); and none ends on the target unnamed.
 *
 * Both spare, when the campaign says it (O1) or finishes (I2), an agent owed a late rollback
 * ({@link owesLateRollback}): it said FAILED on the upgrade and had not opened a stream on the
 * target by then, so Control judged it off the target from what it said; the campaign's late
 * rollback (control/campaign/late-rollback.ts) is to reach it once it says Hello on the target.
 * It is remembered, and judged at the end of the run instead ({@link lateRollbackEndViolations}):
 * it ends on its previous version, unless another campaign sent it something since, its previous
 * release was yanked, or it never opened a stream on the target (Control never heard it run it).
 */
import type { CampaignNode } from "../control/campaign/index.js";
import type { SimAgent } from "./agent-script.js";
import { backOnBy, firstSent } from "./ground-truth.js";
import { type OutcomeWorld, opId } from "./outcome-world.js";

/** Whether the campaign names the node as not rolled back (its state, or its message). */
function names(message: string | undefined, n: CampaignNode): boolean {
  return (
    n.state === "rollback_failed" ||
    n.rollbackResult === "rollback_failed" ||
    n.rollbackResult === "rollback_unconfirmed" ||
    (message ?? "").includes(n.nodeId)
  );
}

/** The nodes of the current batch that took the campaign's upgrade, with what they ran before. */
function tookUpgrade(
  w: OutcomeWorld,
  campaignId: string,
  batch: number,
): { row: CampaignNode; agent: SimAgent; previous: string; received: number }[] {
  const out = [];
  for (const row of w.store.tables.nodes.get(campaignId) ?? []) {
    if (row.batch !== batch) continue;
    const agent = w.fleet.agents.get(row.nodeId);
    if (agent === undefined) continue;
    const id = opId(campaignId, row.nodeId, "upgrade");
    const first = agent.record.received.find((o) => o.id === id);
    if (first === undefined) continue;
    out.push({ row, agent, previous: first.agentVersion, received: first.at });
  }
  return out;
}

/**
 * How long after an agent opens a stream the Control deciding may not have judged its Hello yet
 * (its step, the stream's handshake), beside the Controls' clock tolerance.
 */
const HELLO_JUDGED_MS = 5_000;

/**
 * True when the agent, sent campaign `campaignId`'s upgrade at `received`, said FAILED on it and
 * had opened no stream on the target by `by` (less the time a Hello takes to be judged): Control
 * judged it off the target from what it said, and owes it the campaign's late rollback.
 */
export function owesLateRollback(
  w: OutcomeWorld,
  campaignId: string,
  nodeId: string,
  received: number,
  by: number,
): boolean {
  const agent = w.fleet.agents.get(nodeId);
  const target = w.store.tables.campaigns.get(campaignId)?.campaign.spec.targetVersion;
  if (agent === undefined || target === undefined) return false;
  const upgrade = opId(campaignId, nodeId, "upgrade");
  if (!agent.record.reports.some((r) => r.operationId === upgrade && r.phase === "FAILED"))
    return false;
  const seenBy = by - HELLO_JUDGED_MS - (w.clockToleranceMs ?? 0);
  return !agent.record.connects.some(
    (c) => c.at > received && c.at <= seenBy && c.version === target,
  );
}

/** Remembers that `nodeId` is owed `campaignId`'s late rollback (judged at the end). */
function noteOwed(w: OutcomeWorld, campaignId: string, nodeId: string): void {
  const owed = w.state.owedLate.get(campaignId) ?? new Set<string>();
  owed.add(nodeId);
  w.state.owedLate.set(campaignId, owed);
}

/** O1 at the moment (`now`) a campaign says it rolled back (or failed to). */
export function rollbackClaimViolations(
  w: OutcomeWorld,
  campaignId: string,
  now: number,
): string[] {
  const c = w.store.tables.campaigns.get(campaignId)?.campaign;
  if (c === undefined) return [];
  const out: string[] = [];
  for (const { row, agent, previous, received } of tookUpgrade(w, campaignId, c.currentBatch)) {
    if (agent.version === previous) continue;
    if (owesLateRollback(w, campaignId, row.nodeId, received, now)) {
      noteOwed(w, campaignId, row.nodeId);
      continue;
    }
    if (c.phase === "rolled_back")
      out.push(
        `O1: ${campaignId} says rolled_back but ${row.nodeId} (${row.state}${row.code ? `/${row.code}` : ""}) runs ${agent.version}, not its previous ${previous}`,
      );
    else if (!names(c.message, row))
      out.push(
        `O1: ${campaignId} says ${c.phase}/${c.code ?? ""} without naming ${row.nodeId}, which runs ${agent.version}, not its previous ${previous}`,
      );
  }
  return out;
}

/** I2 from ground truth, when (`now`) a campaign that rolled a batch back finishes. */
export function finishedRollbackViolations(
  w: OutcomeWorld,
  campaignId: string,
  now: number,
): string[] {
  const c = w.store.tables.campaigns.get(campaignId)?.campaign;
  if (c === undefined) return [];
  const target = c.spec.targetVersion;
  const out: string[] = [];
  const nodes = tookUpgrade(w, campaignId, c.currentBatch);
  // When the rollback began: its first send to a node of the batch (or the finish, without one).
  const rollbackAt = Math.min(
    c.finishedAt ?? Number.POSITIVE_INFINITY,
    ...nodes.map(
      ({ row, agent }) =>
        firstSent(agent.record, opId(campaignId, row.nodeId, "rollback")) ??
        Number.POSITIVE_INFINITY,
    ),
  );
  for (const { row, agent, received, previous } of nodes) {
    const r = agent.record;
    const ranTarget = r.runs.some((x) => x.version === target && x.at >= received);
    if (!ranTarget) continue;
    if (owesLateRollback(w, campaignId, row.nodeId, received, now)) {
      noteOwed(w, campaignId, row.nodeId);
      continue;
    }
    const sent = firstSent(r, opId(campaignId, row.nodeId, "rollback")) !== undefined;
    // Back on its previous release by itself, and seen so, before the rollback began.
    const back = backOnBy(r, previous, received, rollbackAt);
    // It failed the release's health checks on the target and its supervisor took it back to
    // its previous version before it ever connected on it: nothing is left to roll back.
    const revertedItself =
      (r.healthFailures ?? []).includes(opId(campaignId, row.nodeId, "upgrade")) &&
      agent.version !== target;
    if (!sent && !back && !revertedItself && !names(c.message, row))
      out.push(
        `I2: ${row.nodeId} ran ${target} after ${campaignId}'s upgrade and was neither sent a rollback nor named as not rolled back`,
      );
    if (agent.version === target && !names(c.message, row))
      out.push(
        `I2: ${campaignId} finished ${c.phase} while ${row.nodeId} (${row.state}${row.code ? `/${row.code}` : ""}) still runs ${target}, not named as not rolled back`,
      );
  }
  return out;
}

/**
 * O1 at the end of a run: every node of a rolled-back batch that took the upgrade ends on the
 * version it ran before, unless another campaign sent it something since.
 */
export function rolledBackEndViolations(w: OutcomeWorld, campaignId: string): string[] {
  const c = w.store.tables.campaigns.get(campaignId)?.campaign;
  if (c?.phase !== "rolled_back") return [];
  const out: string[] = [];
  for (const { row, agent, previous, received } of tookUpgrade(w, campaignId, c.currentBatch)) {
    const later = agent.record.received.some((o) => o.campaignId !== campaignId && o.at > received);
    if (!later && agent.version !== previous)
      out.push(
        `O1: ${campaignId} ended rolled_back but ${row.nodeId} ends on ${agent.version}, not its previous ${previous}`,
      );
  }
  return out;
}

/**
 * O1 at the end of a run for the agents owed a late rollback ({@link owesLateRollback}): each
 * ends on the version it ran before the upgrade, unless another campaign sent it something
 * since, its previous release was yanked (no rollback reinstalls a yanked release), or it never
 * opened a stream on the target after the upgrade (Control never heard it run it).
 */
export function lateRollbackEndViolations(w: OutcomeWorld): string[] {
  const out: string[] = [];
  for (const [campaignId, nodeIds] of w.state.owedLate) {
    const c = w.store.tables.campaigns.get(campaignId)?.campaign;
    if (c === undefined) continue;
    const target = c.spec.targetVersion;
    for (const { row, agent, previous, received } of tookUpgrade(w, campaignId, c.currentBatch)) {
      if (!nodeIds.has(row.nodeId) || agent.version === previous) continue;
      const r = agent.record;
      if (r.received.some((o) => o.campaignId !== campaignId && o.at > received)) continue;
      if (w.store.tables.yanks.has(previous)) continue;
      if (!r.connects.some((x) => x.at > received && x.version === target)) continue;
      const late = firstSent(r, opId(campaignId, row.nodeId, "rollback"));
      out.push(
        `O1: ${campaignId} ended ${c.phase} and owed ${row.nodeId} (${row.state}${row.code ? `/${row.code}` : ""}, said FAILED yet ran ${target}) a late rollback, but it ends on ${agent.version}, not its previous ${previous} (rollback ${late === undefined ? "never sent" : `first sent at ${late}`})`,
      );
    }
  }
  return out;
}
