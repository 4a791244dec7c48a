/**
 * The worker's side of the progress deadline (`campaign/progress.ts`): after each decision it
 * judges the campaign's stall from the records the decision leaves, writes one audit row per
 * stall (`campaign.stalled`, actor control) in the decision's transaction, and tells the
 * observer whether the campaign is stalled now. Reporting changes nothing in the campaign.
 */
import {
  type CampaignNode,
  type CampaignState,
  formatLeft,
  progressStall,
  type Stall,
} from "../campaign/index.js";
import type { AuditRow } from "../campaign-store/index.js";
import { ENGINE_ACTOR } from "./audit.js";

/** The stall each campaign was last reported for (its `since`), per leader process. */
export type ReportedStalls = Map<string, number>;

/** The campaign's stall at `now`, and the audit row to write when it is a new one. */
export function judgeStall(
  reported: ReportedStalls,
  campaign: CampaignState,
  nodes: readonly CampaignNode[],
  now: number,
): { stall: Stall | undefined; audit: AuditRow | undefined } {
  const stall = progressStall(campaign, nodes, now);
  if (stall === undefined || reported.get(campaign.id) === stall.since)
    return { stall, audit: undefined };
  const b = campaign.currentBatch + 1;
  return {
    stall,
    audit: {
      actor: ENGINE_ACTOR,
      actorIp: "",
      action: "campaign.stalled",
      campaignId: campaign.id,
      message: `campaign ${campaign.id}: no progress for ${formatLeft(stall.stalledMs)} (progress deadline ${formatLeft(stall.deadlineMs)}) in batch ${b}, phase ${campaign.phase}; see agentctl campaign why ${campaign.id}`,
      detail: {
        batch: campaign.currentBatch,
        since: new Date(stall.since).toISOString(),
        stalledMs: stall.stalledMs,
        deadlineMs: stall.deadlineMs,
      },
    },
  };
}

/** Marks the stall reported once its audit row committed; forgets a campaign that progressed. */
export function noteStall(
  reported: ReportedStalls,
  campaignId: string,
  stall: Stall | undefined,
): void {
  if (stall === undefined) reported.delete(campaignId);
  else reported.set(campaignId, stall.since);
}
