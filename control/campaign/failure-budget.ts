/**
 * The campaign-wide limits beyond a batch's threshold: the failure budget (`--max-failures
 * N|P%`, over every batch) and the minimum sample (`--min-canaries N`). Pure functions of
 * records and `now`, shared by the engine (`campaign-limits.ts`), admission, the API's views,
 * the CLI and the tests.
 */
import { isSettled } from "./batch-rules.js";
import { type CampaignNode, isFailure } from "./model.js";
import type { Parsed } from "./ramp.js";
import type { FailureBudget } from "./spec.js";

/**
 * Parses `--max-failures`: a whole number of nodes ("10") or a whole percentage of the
 * campaign's offerable nodes ("2%", 0 to 100). Anything else is refused with a sentence.
 */
export function parseFailureBudget(text: string): Parsed<FailureBudget> {
  const t = text.trim();
  const percent = /^(\d+)\s*%$/.exec(t);
  if (percent !== null) {
    const value = Number(percent[1]);
    if (value > 100)
      return { ok: false, message: `"${text}" is above 100 %: give N nodes or P% from 0 to 100` };
    return { ok: true, value: { kind: "percent", percent: value } };
  }
  if (/^\d+$/.test(t) && Number.isSafeInteger(Number(t)))
    return { ok: true, value: { kind: "count", count: Number(t) } };
  return {
    ok: false,
    message: `"${text}" is not a failure budget: give a number of nodes (10) or a percentage (2%)`,
  };
}

/** `--max-failures`'s text of a budget: "10" or "2%". */
export function formatFailureBudget(b: FailureBudget): string {
  return b.kind === "count" ? String(b.count) : `${b.percent}%`;
}

/** A campaign's failures and offerable nodes over every batch. */
export interface CampaignCounts {
  /** Nodes failed or timed out, in any batch. */
  readonly failed: number;
  /** Nodes not skipped, in any batch (the denominator of a percentage). */
  readonly offerable: number;
}

/**
 * How many failed nodes the budget allows for `offerable` nodes: the count, or
 * floor(percent × offerable / 100). One failure more exceeds it.
 */
export function failureAllowance(b: FailureBudget, offerable: number): number {
  return b.kind === "count" ? b.count : Math.floor((b.percent * offerable) / 100);
}

/**
 * True when the campaign's failures exceed the budget (strictly: 2 of 100 at 2 % is within it,
 * 3 is not) and exceed the failures an operator accepted by resuming after a pause.
 */
export function exceedsBudget(
  counts: CampaignCounts,
  budget: FailureBudget,
  accepted: number,
): boolean {
  return counts.failed > accepted && counts.failed > failureAllowance(budget, counts.offerable);
}

/**
 * True when the node counts toward what `--min-canaries` asks of its batch: every node except
 * those settled without an offer because they could never take it (already on the target,
 * without upgrade.v1, of a platform the release lacks, ahead of its sequence). A node skipped
 * because it went offline
 * or was disabled still counts: losing canaries does not shrink the sample asked for. A node
 * carried over into the batch (still deferring when its own batch passed) does not either: the
 * batch asks the sample it asked without it, so a carried node that stays busy never makes it
 * short (it is part of the sample once it settles there, {@link inSample}).
 */
export function countsTowardSample(n: CampaignNode): boolean {
  if (n.code === "already_current" || n.carriedFrom !== undefined) return false;
  return !(
    n.state === "skipped" &&
    (n.code === "upgrade_unsupported" ||
      n.code === "platform_unsupported" ||
      n.code === "ahead_of_target")
  );
}

/**
 * True when the node is part of its batch's settled sample: it was offered the upgrade in this
 * campaign and has an outcome — succeeded, failed or timed out, or verifying past its config
 * grace.
 */
export function inSample(n: CampaignNode, now: number): boolean {
  if (n.offeredAt === undefined) return false;
  if (n.state === "succeeded" || isFailure(n.state)) return true;
  return n.state === "verifying" && isSettled(n, now);
}

/** A batch's minimum sample: how many of its nodes settled, and how many it must have. */
export interface Sample {
  readonly settled: number;
  /** min(minCanaries, the batch's nodes that count toward it). */
  readonly required: number;
}

/** The sample of a batch's nodes at `now` for `minCanaries` (see {@link Sample}). */
export function sampleOf(nodes: readonly CampaignNode[], minCanaries: number, now: number): Sample {
  let settled = 0;
  let counted = 0;
  for (const n of nodes) {
    if (countsTowardSample(n)) counted++;
    if (inSample(n, now)) settled++;
  }
  return { settled, required: Math.min(minCanaries, counted) };
}
