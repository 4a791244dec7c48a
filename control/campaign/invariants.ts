/**
 * The campaign engine's safety invariants over stored records, as executable checks. Each
 * returns one line per violation (empty when the records are safe). The property tests, the
 * deterministic simulation (after every step) and the engine itself (after every decision)
 * run them; the fleet-wide ones that need more than one campaign's records (pool budgets
 * across campaigns, what agents applied) live in the simulation.
 *
 * - I1: no batch passed, and no later batch started, while more than its threshold of its
 *   offerable nodes had failed.
 * - I2: in a batch being (or that was) rolled back, every node that reached or may reach the
 *   target was sent a rollback, and none is left upgraded.
 * - I3: every `succeeded` node of a passed batch, `already_current` included, was confirmed.
 * - I6: final node states never change; `finishedAt` is set only when every node is final, and
 *   never changes once set; an ended phase never changes.
 * - W1: no node was offered outside every maintenance window of its campaign.
 * - W2: no batch of a campaign with windows passed before its minimum duration of time inside
 *   the windows (paused time excluded).
 * - R1: no step of a ramp holds more nodes than its rate allows (`rampStepLimit`).
 * - G1: every non-empty batch that passed in a campaign with gates passed on a holding result of
 *   each gate, taken at or after the batch settled.
 */
import { countBatch, countedMs, isBreached } from "./batch-rules.js";
import type { CampaignNode, CampaignState } from "./model.js";
import { isEndedPhase, isFinal, isUpgrading } from "./model.js";
import { rampStepLimit } from "./ramp.js";
import { mayRunTarget } from "./rollback.js";
import { windowOpen } from "./windows.js";

/** True when a node of a rolled-back batch reached, or may still reach, the target. */
export function mayHoldTarget(n: CampaignNode): boolean {
  return (
    mayRunTarget(n) ||
    n.state === "rolling_back" ||
    n.state === "rolled_back" ||
    n.state === "rollback_failed"
  );
}

/** The batch a rollback concerns, when the campaign is rolling back or rolled one back. */
export function rolledBackBatch(c: CampaignState): number | undefined {
  if (c.rollbackCause === undefined) return undefined;
  if (c.phase === "rolling_back" || c.phase === "rolled_back" || c.phase === "failed")
    return c.currentBatch;
  return undefined;
}

/** W1, W2, R1 and G1: the rules of windows, ramps and gates over one campaign's records. */
export function scheduleViolations(c: CampaignState, nodes: readonly CampaignNode[]): string[] {
  const out: string[] = [];
  const { windows, ramp, gates } = c.spec;
  if (windows !== undefined && windows.length > 0) {
    for (const n of nodes) {
      if (n.offeredAt !== undefined && !windowOpen(windows, n.offeredAt))
        out.push(`W1: node ${n.nodeId} was offered at ${n.offeredAt}, outside every window`);
    }
    for (const b of c.batches) {
      if (b.state !== "passed" || b.nodeCount === 0) continue;
      const counted = countedMs(b, undefined, b.endedAt ?? b.startedAt ?? 0, windows);
      if (counted < b.minDurationMs)
        out.push(
          `W2: batch ${b.index + 1} passed after ${counted} ms inside its windows, less than its ${b.minDurationMs} ms`,
        );
    }
  }
  if (ramp !== undefined) {
    for (const b of c.batches) {
      if (b.nodeCount > rampStepLimit(ramp, b.index))
        out.push(
          `R1: ramp step ${b.index + 1} holds ${b.nodeCount} nodes, more than its ${rampStepLimit(ramp, b.index)}`,
        );
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

/** I1, I2, I3 and the static half of I6 over one campaign's records, with {@link scheduleViolations}. */
export function recordViolations(c: CampaignState, nodes: readonly CampaignNode[]): string[] {
  const out: string[] = [];
  const byBatch = c.batches.map(() => [] as CampaignNode[]);
  for (const n of nodes) byBatch[n.batch]?.push(n);
  for (const b of c.batches) {
    const batchNodes = byBatch[b.index] ?? [];
    if (b.index < c.currentBatch && b.state !== "passed")
      out.push(`I1: batch ${b.index + 1} is ${b.state} but batch ${c.currentBatch + 1} started`);
    if (b.state === "passed") {
      const counts = countBatch(batchNodes);
      if (isBreached(counts, c.spec.failureThresholdPercent, b.acceptedFailures))
        out.push(
          `I1: batch ${b.index + 1} passed with ${counts.failed} of ${counts.offerable} failed (threshold ${c.spec.failureThresholdPercent} %)`,
        );
      for (const n of batchNodes) {
        if (n.state === "succeeded" && n.confirmOperationId === undefined)
          out.push(
            `I3: node ${n.nodeId} succeeded in passed batch ${b.index + 1} but was never confirmed`,
          );
        if (!isFinal(n.state))
          out.push(`I1: batch ${b.index + 1} passed with node ${n.nodeId} still ${n.state}`);
      }
    }
  }
  const rb = rolledBackBatch(c);
  if (rb !== undefined) {
    for (const n of byBatch[rb] ?? []) {
      if (isUpgrading(n.state))
        out.push(`I2: node ${n.nodeId} is still ${n.state} in batch ${rb + 1}, which rolls back`);
      if (mayHoldTarget(n) && n.rollbackOperationId === undefined)
        out.push(
          `I2: node ${n.nodeId} (${n.state}${n.code ? `/${n.code}` : ""}) of rolled-back batch ${rb + 1} was never sent a rollback`,
        );
    }
  }
  if (c.finishedAt !== undefined) {
    const open = nodes.filter((n) => !isFinal(n.state));
    if (open.length > 0)
      out.push(
        `I6: finished while ${open.length} node(s) are not final (${open[0]?.nodeId} is ${open[0]?.state})`,
      );
    if (!isEndedPhase(c.phase)) out.push(`I6: finished in phase ${c.phase}`);
  }
  for (const v of scheduleViolations(c, nodes)) out.push(v);
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
    if (b === undefined || !isFinal(b.state)) continue;
    if (b.state !== n.state || b.code !== n.code || b.finishedAt !== n.finishedAt)
      out.push(
        `I6: node ${n.nodeId} was final ${b.state}/${b.code ?? ""} and became ${n.state}/${n.code ?? ""}`,
      );
  }
  const bc = before.campaign;
  const ac = after.campaign;
  if (bc.finishedAt !== undefined && ac.finishedAt !== bc.finishedAt)
    out.push(`I6: finishedAt changed from ${bc.finishedAt} to ${ac.finishedAt}`);
  if (isEndedPhase(bc.phase) && ac.phase !== bc.phase)
    out.push(`I6: ended phase ${bc.phase} became ${ac.phase}`);
  return out;
}
