/**
 * The download budget (`--max-downloads N`): at most N of a campaign's nodes fetching the
 * artifact at once, a sub-budget of the in-flight slots beside the batch's concurrency and the
 * pools' disruption budgets. Pure functions of the records and the live facts.
 */
import type { CampaignNode, NodeFacts, ObservedPhase } from "./model.js";
import { reportFor } from "./reports.js";
import type { CampaignSpec } from "./spec.js";

/**
 * True while the node may be downloading the artifact as far as Control can know: it was
 * offered the upgrade and has not yet said its download ended. That is `offered` or `applying`
 * with no report on the upgrade, or a latest report of ACCEPTED or DOWNLOADING (a report that
 * goes back to DOWNLOADING takes the slot again), or of DEFERRED (a deferred node offered
 * again: that report answered the earlier offer). VERIFYING, APPLYING and RESTARTING come after
 * the download; a node restarting, verifying or final holds no download slot. An Agent reports
 * VERIFYING only once its last byte arrived, so Control's count is never below the nodes truly
 * downloading: it lags behind their reports, never ahead of them.
 */
export function mayBeDownloading(n: CampaignNode, facts: NodeFacts | undefined): boolean {
  return downloadingAfter(n, reportFor(facts, n.upgradeOperationId)?.phase);
}

/**
 * {@link mayBeDownloading} from the phase alone: `phase` is the latest phase the node reported
 * on its upgrade operation (undefined when it reported none). Any reader that knows only the
 * stored phases (`campaign why`) counts the same nodes the engine counts.
 */
export function downloadingAfter(n: CampaignNode, phase: ObservedPhase | undefined): boolean {
  if (n.state !== "offered" && n.state !== "applying") return false;
  // DEFERRED on a node offered (again) answered an earlier offer, or this one and the node is
  // about to wait again: either way its slot is held until the node says its download ended.
  return (
    phase === undefined || phase === "DEFERRED" || phase === "ACCEPTED" || phase === "DOWNLOADING"
  );
}

/** How many nodes the campaign may have downloading at once: `maxDownloads`, or no limit. */
export function downloadLimit(spec: CampaignSpec): number {
  return spec.maxDownloads === undefined ? Number.POSITIVE_INFINITY : spec.maxDownloads;
}
