/**
 * The campaign engine's invariants over one campaign's stored records, judged by the reference
 * models of `reference/` (never by the engine's own functions: a check that shares the code it
 * checks cannot see that code's defects). The simulation runs them after every step, and the
 * pure engine's property tests after every decision. What only the world can see (what agents
 * ran, received and confirmed) is judged in `outcome-invariants.ts`.
 *
 * - I1: no batch passed, and no later batch started, while more than its threshold of its
 *   offerable nodes had failed (a brute-force recount of the batch's node states).
 * - I2 (records): in a batch being (or that was) rolled back, no node is still upgrading, and
 *   every node that was offered the upgrade and may hold it was sent a rollback.
 * - I3: every `succeeded` node of a passed batch, `already_current` included, was confirmed.
 * - I6: final node states never change; `finishedAt` only when every node is final, and never
 *   changes once set; an ended phase never changes.
 * - W1: no node was offered outside every maintenance window (a minute-by-minute scan of local
 *   time through `Intl`).
 * - W2: no batch with windows passed before its minimum duration of time inside them, paused
 *   time excluded (the same scan, integrated).
 * - R1: no step of a ramp holds more nodes than its rate allows (exact rational arithmetic);
 *   with `minCanaries N` the first step may hold N nodes to upgrade and those needing no offer.
 * - G1: every non-empty batch that passed with gates passed on a holding result of each gate
 *   taken at or after the batch settled (or on an operator's skip of it, recorded when it passed).
 */
import type { CampaignNode, CampaignState, MaintenanceWindow } from "../control/campaign/index.js";
import { refRampOf, refStepLimit } from "./reference/ramp.js";
import {
  REF_ENDED_PHASES,
  REF_FINAL_STATES,
  REF_UPGRADING_STATES,
  refBreached,
  refCount,
} from "./reference/threshold.js";
import { refClosedMs, refWindowOpen } from "./reference/windows.js";

/** Failure codes that prove the node never ran the target (it refused, failed or reverted). */
const NEVER_RAN_TARGET: ReadonlySet<string> = new Set([
  "rejected",
  "apply_failed",
  "reverted",
  "health_check_failed",
  "offer_failed",
]);

/** Whether a node of a rolled-back batch was offered the upgrade and may hold it. */
function offeredAndMayHold(n: CampaignNode): boolean {
  if (n.upgradeOperationId === undefined) return false;
  if (n.state === "canceled" || n.state === "skipped" || n.state === "waiting") return false;
  if (n.state === "failed" && NEVER_RAN_TARGET.has(n.code ?? "")) return false;
  return true;
}

/** The batch a rollback concerns, when the campaign is rolling back or rolled one back. */
function rolledBackBatch(c: CampaignState): number | undefined {
  if (c.rollbackCause === undefined) return undefined;
  if (c.phase === "rolling_back" || c.phase === "rolled_back" || c.phase === "failed")
    return c.currentBatch;
  if (c.phase === "aborted" && c.rollbackCause === "abort") return c.currentBatch;
  return undefined;
}

/** Closed time of spans already judged, by windows and span (the records are re-checked often). */
const closedSpans = new Map<string, number>();

function closedMs(windows: readonly MaintenanceWindow[], a: number, b: number): number {
  const key = `${windows.map((w) => `${w.days.join("")}/${w.startMinute}/${w.endMinute}/${w.timeZone}`).join(";")}|${a}|${b}`;
  const known = closedSpans.get(key);
  if (known !== undefined) return known;
  if (closedSpans.size > 50_000) closedSpans.clear();
  const closed = refClosedMs(windows, a, b);
  closedSpans.set(key, closed);
  return closed;
}

/**
 * With `--min-canaries N` the first step may hold more than its rate: N nodes to upgrade and
 * those before them in canary order that need no offer. Bounded by N plus its nodes never
 * offered (every node it offers is one to upgrade). 0 for other steps or without it.
 */
function widenedFirstStep(c: CampaignState, nodes: readonly CampaignNode[], index: number) {
  const min = c.spec.minCanaries;
  if (index !== 0 || min === undefined) return 0;
  return min + nodes.filter((n) => n.batch === 0 && n.offeredAt === undefined).length;
}

/** W1, W2, R1 and G1 over one campaign's records. */
export function scheduleViolations(c: CampaignState, nodes: readonly CampaignNode[]): string[] {
  const out: string[] = [];
  const { windows, ramp, gates } = c.spec;
  if (windows !== undefined && windows.length > 0) {
    for (const n of nodes) {
      if (n.offeredAt !== undefined && !refWindowOpen(windows, n.offeredAt))
        out.push(`W1: node ${n.nodeId} was offered at ${n.offeredAt}, outside every window`);
    }
    for (const b of c.batches) {
      if (b.state !== "passed" || b.nodeCount === 0 || b.startedAt === undefined) continue;
      const end = b.endedAt ?? b.startedAt;
      // Paused time that was also closed is subtracted once: the batch records how much of its
      // paused time was closed (`pausedClosedMs`, absent before that field: subtracted twice).
      const closedUnpaused = Math.max(
        0,
        closedMs(windows, b.startedAt, end) - (b.pausedClosedMs ?? 0),
      );
      const inside = Math.max(0, end - b.startedAt - closedUnpaused - b.pausedMs);
      if (inside < b.minDurationMs)
        out.push(
          `W2: batch ${b.index + 1} passed after ${inside} ms inside its windows, less than its ${b.minDurationMs} ms`,
        );
    }
  }
  const exact = ramp === undefined ? undefined : refRampOf(ramp);
  if (exact !== undefined) {
    for (const b of c.batches) {
      const limit = Math.max(refStepLimit(exact, b.index), widenedFirstStep(c, nodes, b.index));
      if (b.nodeCount > limit)
        out.push(`R1: ramp step ${b.index + 1} holds ${b.nodeCount} nodes, more than its ${limit}`);
    }
  }
  if (gates !== undefined && gates.length > 0) {
    for (const b of c.batches) {
      if (b.state !== "passed" || b.nodeCount === 0) continue;
      for (let g = 0; g < gates.length; g++) {
        const e = b.gateEvidence?.find((x) => x.gate === g);
        if (e === undefined || b.settledAt === undefined || e.at < b.settledAt)
          out.push(
            `G1: batch ${b.index + 1} passed without a holding result of gate ${g + 1} after it settled`,
          );
      }
    }
  }
  return out;
}

/** I1, I2 (records), I3 and the static half of I6 over one campaign, with {@link scheduleViolations}. */
export function recordViolations(c: CampaignState, nodes: readonly CampaignNode[]): string[] {
  const out: string[] = [];
  for (const b of c.batches) {
    const batchNodes = nodes.filter((n) => n.batch === b.index);
    if (b.index < c.currentBatch && b.state !== "passed")
      out.push(`I1: batch ${b.index + 1} is ${b.state} but batch ${c.currentBatch + 1} started`);
    if (b.state !== "passed") continue;
    const { failed, offerable } = refCount(batchNodes.map((n) => n.state));
    if (refBreached(failed, offerable, c.spec.failureThresholdPercent, b.acceptedFailures))
      out.push(
        `I1: batch ${b.index + 1} passed with ${failed} of ${offerable} failed (threshold ${c.spec.failureThresholdPercent} %)`,
      );
    for (const n of batchNodes) {
      if (n.state === "succeeded" && n.confirmOperationId === undefined)
        out.push(
          `I3: node ${n.nodeId} succeeded in passed batch ${b.index + 1} but was never confirmed`,
        );
      if (!REF_FINAL_STATES.has(n.state))
        out.push(`I1: batch ${b.index + 1} passed with node ${n.nodeId} still ${n.state}`);
    }
  }
  const rb = rolledBackBatch(c);
  if (rb !== undefined) {
    for (const n of nodes) {
      if (n.batch !== rb) continue;
      if (REF_UPGRADING_STATES.has(n.state))
        out.push(`I2: node ${n.nodeId} is still ${n.state} in batch ${rb + 1}, which rolls back`);
      if (offeredAndMayHold(n) && n.rollbackOperationId === undefined)
        out.push(
          `I2: node ${n.nodeId} (${n.state}${n.code ? `/${n.code}` : ""}) of rolled-back batch ${rb + 1} was never sent a rollback`,
        );
    }
  }
  if (c.finishedAt !== undefined) {
    const open = nodes.filter((n) => !REF_FINAL_STATES.has(n.state));
    if (open.length > 0)
      out.push(
        `I6: finished while ${open.length} node(s) are not final (${open[0]?.nodeId} is ${open[0]?.state})`,
      );
    if (!REF_ENDED_PHASES.has(c.phase)) out.push(`I6: finished in phase ${c.phase}`);
  }
  out.push(...scheduleViolations(c, nodes));
  return out;
}

/** The transition half of I6: what may never change between two states of one campaign. */
export function transitionViolations(
  before: { readonly campaign: CampaignState; readonly nodes: readonly CampaignNode[] },
  after: { readonly campaign: CampaignState; readonly nodes: readonly CampaignNode[] },
): string[] {
  const out: string[] = [];
  const was = new Map(before.nodes.map((n) => [n.nodeId, n]));
  for (const n of after.nodes) {
    const b = was.get(n.nodeId);
    if (b === undefined || !REF_FINAL_STATES.has(b.state)) continue;
    if (b.state !== n.state || b.code !== n.code || b.finishedAt !== n.finishedAt)
      out.push(
        `I6: node ${n.nodeId} was final ${b.state}/${b.code ?? ""} and became ${n.state}/${n.code ?? ""}`,
      );
  }
  const bc = before.campaign;
  const ac = after.campaign;
  if (bc.finishedAt !== undefined && ac.finishedAt !== bc.finishedAt)
    out.push(`I6: finishedAt changed from ${bc.finishedAt} to ${ac.finishedAt}`);
  if (REF_ENDED_PHASES.has(bc.phase) && ac.phase !== bc.phase)
    out.push(`I6: ended phase ${bc.phase} became ${ac.phase}`);
  return out;
}
