/**
 * Whether a completed campaign's target becomes the desired version of its selector: only
 * when the release demonstrably works there. Pure: the worker's convergence pass reads the
 * campaign and its nodes and records the desired version (or says why not) from this rule.
 */
import { countBatch, isBreached } from "./batch-rules.js";
import { exceedsBudget, failureAllowance, formatFailureBudget } from "./failure-budget.js";
import type { CampaignNode, CampaignState } from "./model.js";

/**
 * Why the completed `campaign` records no desired version, or undefined when it does. It
 * records one only when at least one of its nodes succeeded (`already_current` included:
 * that node runs the target), no batch had more failed nodes than the campaign's threshold
 * of its offerable ones, and the whole campaign had no more failed nodes than its own failure
 * budget (`--max-failures`) allows. Failures an operator accepted by resuming after an
 * `on_breach pause` (a batch's threshold or the budget) still count here: such a campaign may
 * complete, but its target is not pushed to the rest of the selector by convergence (an
 * operator can still `desired set` it).
 */
export function desiredRecordRefusal(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
): string | undefined {
  if (!nodes.some((n) => n.state === "succeeded")) return "no node succeeded";
  const threshold = campaign.spec.failureThresholdPercent;
  const byBatch = new Map<number, CampaignNode[]>();
  for (const n of nodes) {
    const list = byBatch.get(n.batch);
    if (list === undefined) byBatch.set(n.batch, [n]);
    else list.push(n);
  }
  for (const b of campaign.batches) {
    const counts = countBatch(byBatch.get(b.index) ?? []);
    if (isBreached(counts, threshold, 0)) {
      return `${counts.failed} of ${counts.offerable} nodes of batch ${b.index + 1} failed (threshold ${threshold} %)`;
    }
  }
  const budget = campaign.spec.maxFailures;
  if (budget !== undefined) {
    const counts = countBatch(nodes);
    if (exceedsBudget(counts, budget, 0)) {
      return `${counts.failed} of ${counts.offerable} nodes of the campaign failed (max failures ${formatFailureBudget(budget)}: ${failureAllowance(budget, counts.offerable)} allowed)`;
    }
  }
  return undefined;
}
