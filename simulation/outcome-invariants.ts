/**
 * The outcome invariants, judged from the simulated world's ground truth (`ground-truth.ts`:
 * what each agent really ran, confirmed, was sent and received) against what Control says,
 * after every step and at the end of a run. Control's tables give only what it claims (a
 * campaign's phase, message and node states) and who belongs to which batch; whether a claim
 * is true is read from the agents' record, never from the engine's functions. O1 and I2, the
 * claims of a campaign that rolled a batch back, are in `rollback-invariants.ts`.
 *
 * - O2: a campaign that says `completed` had no batch whose true failures (agents that took the
 *   upgrade and were not back on the target with a new boot by the time the batch passed, or
 *   reported a failed configuration within the grace) exceeded its threshold.
 * - O3: no agent runs a version that no campaign targeted it with: every upgrade it is sent
 *   names a campaign that selected it and that campaign's target, and every version it runs is
 *   its first one or one it was sent.
 * - O4: a disabled node's agent is sent no new offer after it was disabled; a halted desired
 *   version's convergence sends no new offer after the halt; an aborted campaign sends no new
 *   offer after the abort took effect (and for a convergence campaign, neither does its desired
 *   version's convergence to the nodes it held); no campaign offers a node it excludes.
 * - O5: convergence never sends an agent a release at or below the sequence it confirmed, nor a
 *   version below the one it runs.
 * - I3 (ground truth, at the end): every agent of a passed batch that succeeded and is still
 *   online on the target received that campaign's confirm.
 */
import { CONVERGENCE_CREATOR } from "../control/campaign/index.js";
import type { SimAgent } from "./agent-script.js";
import { type AgentRecord, firstReceived, versionAt } from "./ground-truth.js";
import { type OutcomeWorld, opId } from "./outcome-world.js";
import { refCompareVersions, refExcluded } from "./reference/selector.js";
import { refBreached } from "./reference/threshold.js";
import {
  finishedRollbackViolations,
  lateRollbackEndViolations,
  rollbackClaimViolations,
  rolledBackEndViolations,
} from "./rollback-invariants.js";

/** The boot the agent ran when `t` came (that of its last stream opened at or before it). */
function bootAt(r: AgentRecord, t: number): number | undefined {
  let boot: number | undefined;
  for (const c of r.connects) {
    if (c.at > t) break;
    boot = c.boot;
  }
  return boot;
}

/**
 * Whether the agent, sent the upgrade to `target` at `received`, was truly upgraded by `by`: it
 * runs the target then, it came back on it with a new boot, and it reported no failed
 * configuration within `graceMs` of coming back.
 */
function trulyUpgraded(
  r: AgentRecord,
  received: number,
  by: number,
  target: string,
  graceMs: number,
): boolean {
  if (versionAt(r, by) !== target) return false;
  const before = bootAt(r, received);
  const back = r.connects.find(
    (c) => c.at > received && c.at <= by && c.version === target && c.boot !== before,
  );
  if (back === undefined) return false;
  return !r.configFailures.some((t) => t >= back.at && t <= Math.min(by, back.at + graceMs));
}

/** O3, O4 and O5 over the sends and runs since the last step. */
function sendViolations(w: OutcomeWorld): string[] {
  const out: string[] = [];
  const t = w.store.tables;
  for (const [nodeId, a] of w.fleet.agents) {
    const r = a.record;
    const from = w.state.sentChecked.get(nodeId) ?? 0;
    for (let i = from; i < r.sent.length; i++) {
      const op = r.sent[i] as (typeof r.sent)[number];
      if (op.kind !== "upgrade") continue;
      const first = r.sent.findIndex((x) => x.id === op.id) === i;
      const c = t.campaigns.get(op.campaignId);
      const row = t.nodes.get(op.campaignId)?.find((n) => n.nodeId === nodeId);
      if (c === undefined || row === undefined) {
        out.push(`O3: ${nodeId} was sent ${op.id} (${op.version}) by no campaign that selected it`);
        continue;
      }
      if (c.campaign.spec.targetVersion !== op.version)
        out.push(
          `O3: ${nodeId} was sent ${op.version} by ${op.campaignId}, whose target is ${c.campaign.spec.targetVersion}`,
        );
      if (
        refExcluded(c.campaign.spec, { id: nodeId, pool: a.script.pool, labels: a.script.labels })
      )
        out.push(`O4: ${op.campaignId} offered ${nodeId}, which it excludes`);
      if (first) out.push(...newOfferViolations(w, a, op, c.createdBy));
      if (c.createdBy.startsWith(CONVERGENCE_CREATOR)) {
        if (op.sequence <= op.agentConfirmed)
          out.push(
            `O5: convergence ${op.campaignId} sent ${nodeId} sequence ${op.sequence}, at or below the ${op.agentConfirmed} it confirmed`,
          );
        if (refCompareVersions(op.version, op.agentVersion) < 0)
          out.push(
            `O5: convergence ${op.campaignId} sent ${nodeId} ${op.version}, below the ${op.agentVersion} it runs`,
          );
      }
    }
    w.state.sentChecked.set(nodeId, r.sent.length);
    const runsFrom = w.state.runsChecked.get(nodeId) ?? 0;
    for (let i = Math.max(1, runsFrom); i < r.runs.length; i++) {
      const v = (r.runs[i] as (typeof r.runs)[number]).version;
      const sent =
        v === r.initialVersion || r.received.some((o) => o.kind === "upgrade" && o.version === v);
      if (!sent) out.push(`O3: ${nodeId} runs ${v}, which no campaign sent it`);
    }
    w.state.runsChecked.set(nodeId, r.runs.length);
  }
  return out;
}

/** O4 for the first send of an upgrade: not after a disable, a halt or an abort took effect. */
function newOfferViolations(
  w: OutcomeWorld,
  a: SimAgent,
  op: AgentRecord["sent"][number],
  createdBy: string,
): string[] {
  const out: string[] = [];
  const nodeId = a.script.id;
  const disabled = w.disabledAt.get(nodeId);
  if (disabled !== undefined && op.at >= disabled)
    out.push(
      `O4: ${nodeId} was offered ${op.id} at ${op.at}, after it was disabled at ${disabled}`,
    );
  const aborted = w.state.abortedAt.get(op.campaignId);
  if (aborted !== undefined && op.at > aborted)
    out.push(
      `O4: ${op.campaignId} offered ${nodeId} at ${op.at}, after it was aborted at ${aborted}`,
    );
  if (!createdBy.startsWith(CONVERGENCE_CREATOR)) return out;
  const d = w.fleetStore.tables.desired.get(createdBy.slice(CONVERGENCE_CREATOR.length));
  if (d?.haltedAt !== undefined && op.at >= d.haltedAt)
    out.push(
      `O4: convergence ${op.campaignId} offered ${nodeId} at ${op.at}, after ${d.id} was halted at ${d.haltedAt}`,
    );
  // An aborted convergence campaign stops its desired version's convergence of its nodes.
  for (const [id, at] of w.state.abortedAt) {
    const other = w.store.tables.campaigns.get(id);
    if (id === op.campaignId || other?.createdBy !== createdBy || op.at <= at) continue;
    if ((w.store.tables.nodes.get(id) ?? []).some((n) => n.nodeId === nodeId))
      out.push(
        `O4: convergence ${op.campaignId} offered ${nodeId} at ${op.at}, after the operator aborted ${id}, which held it, at ${at}`,
      );
  }
  return out;
}

/** O2 at the moment a campaign says it completed. */
function completionViolations(w: OutcomeWorld, campaignId: string): string[] {
  const entry = w.store.tables.campaigns.get(campaignId);
  if (entry === undefined) return [];
  const c = entry.campaign;
  const target = c.spec.targetVersion;
  const out: string[] = [];
  for (const b of c.batches) {
    if (b.startedAt === undefined) continue;
    // Stamped on its Control's clock, which may be off the agents' (`clock-faults.ts`).
    const passedAt = (b.endedAt ?? Number.POSITIVE_INFINITY) + (w.clockToleranceMs ?? 0);
    // A resume accepts the failures so far: such a batch is judged by I1 on Control's counts.
    const resumed = w.state.commands.some(
      (x) => x.campaignId === campaignId && x.kind === "resume" && x.at <= passedAt,
    );
    if (resumed) continue;
    let offerable = 0;
    const failed: string[] = [];
    for (const row of w.store.tables.nodes.get(campaignId) ?? []) {
      if (row.batch !== b.index) continue;
      const agent = w.fleet.agents.get(row.nodeId);
      if (agent === undefined) continue;
      const r = agent.record;
      const received = firstReceived(r, opId(campaignId, row.nodeId, "upgrade"));
      if (received === undefined || received > passedAt) {
        // Never offered: it counts only when it already ran the target (already current).
        if (received === undefined && versionAt(r, entry.createdAt) === target) offerable++;
        continue;
      }
      // It said "not now" and never took the upgrade: neither offered nor failed (DF1).
      if (deferredOnly(agent, opId(campaignId, row.nodeId, "upgrade"))) continue;
      offerable++;
      if (!trulyUpgraded(r, received, passedAt, target, c.spec.configGraceMs))
        failed.push(row.nodeId);
    }
    if (refBreached(failed.length, offerable, c.spec.failureThresholdPercent, 0))
      out.push(
        `O2: ${campaignId} says completed but batch ${b.index + 1} had ${failed.length} true failures of ${offerable} offered (threshold ${c.spec.failureThresholdPercent} %): ${failed.join(", ")}`,
      );
  }
  return out;
}

/**
 * True when the agent answered operation `id` DEFERRED, every answer it gave on it was DEFERRED,
 * and it never applied it: it only said "not now". One that deferred and then refused or failed
 * the operation is not.
 */
export function deferredOnly(agent: SimAgent, id: string): boolean {
  if ((agent.applied.get(id) ?? 0) > 0) return false;
  if (!(agent.record.deferrals ?? []).some((x) => x.operationId === id)) return false;
  return agent.record.reports.every((r) => r.operationId !== id || r.phase === "DEFERRED");
}

/** Every outcome violation after a step at `now` (empty when Control's claims hold). */
export function outcomeViolations(w: OutcomeWorld, now: number): string[] {
  const out: string[] = [];
  for (const [id, entry] of w.store.tables.campaigns) {
    const c = entry.campaign;
    const aborted = c.code === "aborted" || c.phase === "aborted" || c.rollbackCause === "abort";
    if (aborted && !w.state.abortedAt.has(id)) w.state.abortedAt.set(id, now);
  }
  out.push(...sendViolations(w));
  for (const [id, entry] of w.store.tables.campaigns) {
    const c = entry.campaign;
    if (!w.state.judged.has(id)) {
      if (c.phase === "rolled_back" || (c.phase === "failed" && c.rollbackCause !== undefined)) {
        w.state.judged.add(id);
        out.push(...rollbackClaimViolations(w, id, now));
      } else if (c.phase === "completed") {
        w.state.judged.add(id);
        out.push(...completionViolations(w, id));
      }
    }
    if (
      c.finishedAt !== undefined &&
      c.rollbackCause !== undefined &&
      !w.state.finishJudged.has(id)
    ) {
      w.state.finishJudged.add(id);
      out.push(...finishedRollbackViolations(w, id, now));
    }
  }
  return out;
}

/** How long before the end of a run a confirm sent on an open stream may still be on its way. */
const IN_TRANSIT_MS = 1000;

/** O1 and I3 at the end (`now`) of a run whose campaigns all finished. */
export function outcomeEndViolations(w: OutcomeWorld, now: number): string[] {
  const out: string[] = [];
  const t = w.store.tables;
  out.push(...lateRollbackEndViolations(w));
  for (const [id, entry] of t.campaigns) {
    const c = entry.campaign;
    const target = c.spec.targetVersion;
    out.push(...rolledBackEndViolations(w, id));
    for (const b of c.batches) {
      if (b.state !== "passed") continue;
      for (const row of t.nodes.get(id) ?? []) {
        if (row.batch !== b.index || row.state !== "succeeded" || row.code === "already_current")
          continue;
        const agent = w.fleet.agents.get(row.nodeId);
        if (agent === undefined || agent.session === 0 || agent.version !== target) continue;
        const r = agent.record;
        const received = firstReceived(r, opId(id, row.nodeId, "upgrade")) ?? 0;
        if (r.received.some((o) => o.campaignId !== id && o.at > received)) continue;
        const confirm = opId(id, row.nodeId, "confirm");
        const inTransit = r.sent.some((o) => o.id === confirm && o.at > now - IN_TRANSIT_MS);
        if (firstReceived(r, confirm) === undefined && !inTransit)
          out.push(
            `I3: ${row.nodeId} succeeded in passed batch ${b.index + 1} of ${id}, is online on ${target}, and never received its confirm`,
          );
      }
    }
  }
  return out;
}
