/**
 * What the campaign's current batch waits for, as Control judges it (the same sentences as
 * `agentctl campaign why`): read again every few seconds and whenever the campaign's phase or
 * batch changes, until the campaign is finished.
 */
import { html } from "htm/preact";
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { isFinished } from "../format.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";

/** The "Waits for" list of `campaign` (nothing once it is finished). */
export function CampaignWaits({ campaign }: { campaign: Campaign }) {
  const { api } = useSession();
  const finished = isFinished(campaign);
  const { data, error } = usePoll(
    (signal) =>
      finished
        ? Promise.resolve(undefined)
        : api.campaignWaits.getCampaignWaits({ id: campaign.id }, { signal }),
    [api, campaign.id, finished, campaign.phase, campaign.currentBatch],
    3000,
  );
  if (finished) return null;
  return html`<section class="waits">
    <h3>Waits for</h3>
    <${ErrorLine} error=${error} />
    <ul>
      ${(data?.waits ?? []).map((w) => html`<li data-wait=${w.kind}>${w.text}</li>`)}
    </ul>
  </section>`;
}
