/**
 * What a campaign's current batch waits for, with its windows' state and its gates' latest
 * results (GetCampaignWaits): read every few seconds and whenever the campaign's phase or
 * batch changes, until the campaign is finished (then nothing is read).
 */

import type { Campaign } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { GetCampaignWaitsResponse } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import type { Api } from "./api.js";
import { isFinished } from "./format.js";
import { type Polled, usePoll } from "./use-poll.js";

/** The waits of `campaign`; `data` stays undefined once it is finished. */
export function useCampaignWaits(
  api: Api,
  campaign: Campaign,
): Polled<GetCampaignWaitsResponse | undefined> {
  const finished = isFinished(campaign);
  return usePoll(
    (signal) =>
      finished
        ? Promise.resolve(undefined)
        : api.campaignWaits.getCampaignWaits({ id: campaign.id }, { signal }),
    [api, campaign.id, finished, campaign.phase, campaign.currentBatch],
    3000,
  );
}
