/**
 * How gate results (facts the worker supplies, see `gates.ts`) bear on the current batch.
 * A result counts for a batch when it is that batch's, was taken at or after the batch settled
 * (its `settledAt`), and after any resume that accepted earlier results (`gatesAcceptedAt`).
 */
import { type GateResult, gateFails } from "./gates.js";
import type { BatchRecord, CampaignState } from "./model.js";

/**
 * True while the worker should evaluate the campaign's gates: it has gates, runs or is paused,
 * and its current batch is running, not empty, and settled (every node final or past its
 * grace) — the batch soaks until it passes.
 */
export function gatesWanted(c: CampaignState): boolean {
  if ((c.spec.gates?.length ?? 0) === 0) return false;
  if (c.phase !== "running" && c.phase !== "paused") return false;
  const b = c.batches[c.currentBatch];
  return b !== undefined && b.state === "running" && b.nodeCount > 0 && b.settledAt !== undefined;
}

/** The results that count for batch `b`, latest per gate. */
export function countingResults(
  b: BatchRecord,
  results: readonly GateResult[],
): Map<number, GateResult> {
  const out = new Map<number, GateResult>();
  if (b.settledAt === undefined) return out;
  for (const r of results) {
    if (r.batch !== b.index || r.at < b.settledAt) continue;
    if (b.gatesAcceptedAt !== undefined && r.at <= b.gatesAcceptedAt) continue;
    const seen = out.get(r.gate);
    if (seen === undefined || r.at >= seen.at) out.set(r.gate, r);
  }
  return out;
}

/** The first gate (by index) whose counting result fails at `now`, with that result. */
export function failingGate(
  c: CampaignState,
  b: BatchRecord,
  results: readonly GateResult[],
  now: number,
): GateResult | undefined {
  const gates = c.spec.gates ?? [];
  if (gates.length === 0) return undefined;
  const grace = c.spec.gateGraceMs ?? 0;
  const counting = countingResults(b, results);
  for (let i = 0; i < gates.length; i++) {
    const r = counting.get(i);
    if (r !== undefined && gateFails(r, grace, now)) return r;
  }
  return undefined;
}

/**
 * The passing result of every gate, when each gate's counting result holds; undefined while any
 * gate has none yet, or one that does not hold (unreachable within its grace: the batch waits).
 */
export function passingResults(
  c: CampaignState,
  b: BatchRecord,
  results: readonly GateResult[],
): GateResult[] | undefined {
  const gates = c.spec.gates ?? [];
  const counting = countingResults(b, results);
  const out: GateResult[] = [];
  for (let i = 0; i < gates.length; i++) {
    const r = counting.get(i);
    if (r === undefined || r.status !== "pass") return undefined;
    out.push(r);
  }
  return out;
}

/** When an unreachable gate of the batch will have been so for its grace (a wake-up time). */
export function gateGraceEnds(
  c: CampaignState,
  b: BatchRecord,
  results: readonly GateResult[],
): number | undefined {
  const grace = c.spec.gateGraceMs ?? 0;
  let first: number | undefined;
  for (const r of countingResults(b, results).values()) {
    if (r.status !== "unreachable") continue;
    const ends = (r.unreachableSince ?? r.at) + grace;
    first = first === undefined ? ends : Math.min(first, ends);
  }
  return first;
}
