/**
 * How gate results (facts the worker supplies, see `gates.ts`) bear on the current batch.
 * A result counts for a batch when it is that batch's and was taken (the gate asked, not
 * answered: `GateResult.at`) at or after the batch started and settled (its `startedAt`, `settledAt`), after any resume that accepted earlier
 * results (`gatesAcceptedAt`), and — unless it fails — at or after the deciding Control took the
 * lead (`readyAt`): a batch never passes on a result the previous leader saw. A failing result the
 * previous leader stored still counts (the gate really failed; the store keeps it until a
 * decision acts on it). An unreachable gate's grace runs from the latest of its streak's start,
 * the accepting resume and `readyAt`: neither a pause nor Control's own downtime counts as time
 * the gate was unreachable. A gate an operator skipped for the batch (`skippedGates`) has no
 * counting result: it neither breaches nor holds the batch back, and counts as holding.
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

/**
 * The results that count for batch `b` when the deciding Control took the lead at `readyAt`
 * (-Infinity: not given), latest per gate, each unreachable one with its `unreachableSince`
 * moved up to the moment its grace is counted from (see the file's TSDoc).
 */
export function countingResults(
  b: BatchRecord,
  results: readonly GateResult[],
  readyAt = Number.NEGATIVE_INFINITY,
): Map<number, GateResult> {
  const out = new Map<number, GateResult>();
  if (b.settledAt === undefined) return out;
  const from = Math.max(b.settledAt, b.startedAt ?? Number.NEGATIVE_INFINITY);
  const accepted = b.gatesAcceptedAt ?? Number.NEGATIVE_INFINITY;
  const skipped = b.skippedGates ?? [];
  for (const r of results) {
    if (r.batch !== b.index || r.at < from || r.at <= accepted) continue;
    if (skipped.includes(r.gate)) continue;
    if (r.status !== "fail" && r.at < readyAt) continue;
    const seen = out.get(r.gate);
    if (seen !== undefined && r.at < seen.at) continue;
    out.set(
      r.gate,
      r.status === "unreachable"
        ? { ...r, unreachableSince: Math.max(r.unreachableSince ?? r.at, accepted, readyAt) }
        : r,
    );
  }
  return out;
}

/** The first gate (by index) whose counting result fails at `now`, with that result. */
export function failingGate(
  c: CampaignState,
  b: BatchRecord,
  results: readonly GateResult[],
  now: number,
  readyAt?: number,
): GateResult | undefined {
  const gates = c.spec.gates ?? [];
  if (gates.length === 0) return undefined;
  const grace = c.spec.gateGraceMs ?? 0;
  const counting = countingResults(b, results, readyAt);
  for (let i = 0; i < gates.length; i++) {
    const r = counting.get(i);
    if (r !== undefined && gateFails(r, grace, now)) return r;
  }
  return undefined;
}

/**
 * The passing result of every gate not skipped for the batch, when each such gate's counting
 * result holds; undefined while any has none yet, or one that does not hold (unreachable within
 * its grace: the batch waits).
 */
export function passingResults(
  c: CampaignState,
  b: BatchRecord,
  results: readonly GateResult[],
  readyAt?: number,
): GateResult[] | undefined {
  const gates = c.spec.gates ?? [];
  const counting = countingResults(b, results, readyAt);
  const out: GateResult[] = [];
  for (let i = 0; i < gates.length; i++) {
    if (b.skippedGates?.includes(i)) continue;
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
  readyAt?: number,
): number | undefined {
  const grace = c.spec.gateGraceMs ?? 0;
  let first: number | undefined;
  for (const r of countingResults(b, results, readyAt).values()) {
    if (r.status !== "unreachable") continue;
    const ends = (r.unreachableSince ?? r.at) + grace;
    first = first === undefined ? ends : Math.min(first, ends);
  }
  return first;
}
