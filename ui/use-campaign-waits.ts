/**
 * What a campaign's current batch waits for, with its windows' state and its gates' latest
 * results (GetCampaignWaits): read every few seconds and whenever the campaign's phase or
 * batch changes; once the campaign is finished, read once more and then no more (the gates'
 * results of the batch it ended in stay on the page).
 */

import type { Campaign } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { GetCampaignWaitsResponse } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import type { Api } from "./api.js";
import { isFinished } from "./format.js";
import { type Polled, usePoll } from "./use-poll.js";

/** The waits of `campaign`. */
export function useCampaignWaits(api: Api, campaign: Campaign): Polled<GetCampaignWaitsResponse> {
  const finished = isFinished(campaign);
  return usePoll(
    (signal) => api.campaignWaits.getCampaignWaits({ id: campaign.id }, { signal }),
    [api, campaign.id, finished, campaign.phase, campaign.currentBatch],
    finished ? 0 : 3000,
  );
}
