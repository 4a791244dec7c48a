/**
 * Whether a completed campaign's target becomes the desired version of its selector: only
 * when the release demonstrably works there. Pure: the worker's convergence pass reads the
 * campaign and its nodes and records the desired version (or says why not) from this rule.
 */
import { countBatch, isBreached } from "./batch-rules.js";
import type { CampaignNode, CampaignState } from "./model.js";

/**
 * Why the completed `campaign` records no desired version, or undefined when it does. It
 * records one only when at least one of its nodes succeeded (`already_current` included:
 * that node runs the target) and no batch had more failed nodes than the campaign's
 * threshold of its offerable ones. Failures an operator accepted by resuming after an
 * `on_breach pause` still count here: such a campaign may complete, but its target is not
 * pushed to the rest of the selector by convergence (an operator can still `desired set` it).
 */
export function desiredRecordRefusal(
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
): string | undefined {
  if (!nodes.some((n) => n.state === "succeeded")) return "no node succeeded";
  const threshold = campaign.spec.failureThresholdPercent;
  for (const b of campaign.batches) {
    const counts = countBatch(nodes.filter((n) => n.batch === b.index));
    if (isBreached(counts, threshold, 0)) {
      return `${counts.failed} of ${counts.offerable} nodes of batch ${b.index + 1} failed (threshold ${threshold} %)`;
    }
  }
  return undefined;
}
