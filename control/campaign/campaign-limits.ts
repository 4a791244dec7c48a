/**
 * The campaign-level reasons to take on_breach while every batch is under its threshold
 * (internal to decide, judged by `judgeBreach`): the target release was yanked, the failure
 * budget over every batch is exceeded, or the current batch can no longer give the minimum
 * sample. Each has a campaign code of its own.
 */
import { isSettled } from "./batch-rules.js";
import { activeNodes, allNodes, batchNodes, currentBatch, type Draft, tallyOf } from "./draft.js";
import {
  type CampaignCounts,
  exceedsBudget,
  failureAllowance,
  formatFailureBudget,
  sampleOf,
} from "./failure-budget.js";
import { type CampaignCode, type CampaignNode, isFailure } from "./model.js";

/** A campaign-level breach: its code, the sentence, and the node whose failure made it. */
export interface LimitBreach {
  readonly code: Extract<
    CampaignCode,
    "release_yanked" | "max_failures_exceeded" | "min_canaries_unmet"
  >;
  readonly why: string;
  readonly stoppedByNodeId: string | undefined;
}

/** The campaign's failures and offerable nodes over every batch, from the draft's tallies. */
export function campaignCounts(d: Draft): CampaignCounts {
  let failed = 0;
  let skipped = 0;
  for (let i = 0; i < d.campaign.batches.length; i++) {
    const t = tallyOf(d, i);
    failed += t.failed;
    skipped += t.skipped;
  }
  return { failed, offerable: d.records.length - skipped };
}

/**
 * The failures an operator accepted by resuming after an on_breach=pause: those of every batch
 * before the last batch resumed so, plus the ones that batch had at the resume. 0 when no batch
 * was resumed.
 */
function acceptedFailures(d: Draft): number {
  const batches = d.campaign.batches;
  for (let i = d.campaign.currentBatch; i >= 0; i--) {
    const b = batches[i];
    if (b === undefined || b.gatesAcceptedAt === undefined) continue;
    let earlier = 0;
    for (let j = 0; j < i; j++) earlier += tallyOf(d, j).failed;
    return earlier + b.acceptedFailures;
  }
  return 0;
}

/** The failure past the allowance: failures in the order they happened, then canary order. */
function exceedingNode(d: Draft, allowed: number): CampaignNode | undefined {
  const failures = allNodes(d)
    .filter((n) => isFailure(n.state))
    .sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0) || a.order - b.order);
  return failures[allowed] ?? failures[failures.length - 1];
}

function budgetBreach(d: Draft): LimitBreach | undefined {
  const budget = d.campaign.spec.maxFailures;
  if (budget === undefined) return undefined;
  const counts = campaignCounts(d);
  const accepted = acceptedFailures(d);
  if (!exceedsBudget(counts, budget, accepted)) return undefined;
  const allowed = failureAllowance(budget, counts.offerable);
  return {
    code: "max_failures_exceeded",
    why: `${counts.failed} of ${counts.offerable} nodes of the campaign failed (max failures ${formatFailureBudget(budget)}: ${allowed} allowed)`,
    stoppedByNodeId: exceedingNode(d, Math.max(accepted, allowed))?.nodeId,
  };
}

/**
 * The current batch's shortfall: none of its nodes is waiting and every active one settled, yet fewer of
 * them settled after an offer than `--min-canaries` asks (its nodes went offline or were
 * disabled before they were offered). A batch an operator resumed after a pause takes the
 * sample it has.
 */
function sampleBreach(d: Draft): LimitBreach | undefined {
  const min = d.campaign.spec.minCanaries;
  if (min === undefined) return undefined;
  const b = currentBatch(d);
  if (b.gatesAcceptedAt !== undefined) return undefined;
  if (tallyOf(d, b.index).waiting > 0) return undefined;
  if (!activeNodes(d, b.index).every((n) => isSettled(n, d.now))) return undefined;
  const sample = sampleOf(batchNodes(d, b.index), min, d.now);
  if (sample.settled >= sample.required) return undefined;
  return {
    code: "min_canaries_unmet",
    why: `only ${sample.settled} of the ${sample.required} nodes of batch ${b.index + 1} that min canaries asks for settled after an offer; the others were skipped`,
    stoppedByNodeId: undefined,
  };
}

/**
 * The first campaign-level breach of the running current batch, if any: the target yanked,
 * then the failure budget, then the minimum sample. Reads only; `judgeBreach` acts on it.
 */
export function limitBreach(d: Draft): LimitBreach | undefined {
  if (d.yanked !== undefined) {
    return {
      code: "release_yanked",
      why: `release ${d.target.version} was yanked: ${d.yanked.reason}`,
      stoppedByNodeId: undefined,
    };
  }
  return budgetBreach(d) ?? sampleBreach(d);
}
