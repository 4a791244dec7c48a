/**
 * What the campaign's current batch waits for, as Control judges it (the same sentences as
 * `agentctl campaign why`), from the page's GetCampaignWaits reads.
 */
import { html } from "htm/preact";
import type { GetCampaignWaitsResponse } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { ErrorLine } from "./error-line.js";

/** Props of {@link CampaignWaits}. */
export interface CampaignWaitsProps {
  /** The latest answer; undefined while loading and once the campaign is finished. */
  readonly data: GetCampaignWaitsResponse | undefined;
  readonly error: unknown;
  readonly finished: boolean;
}

/** The "Waits for" list (nothing once the campaign is finished). */
export function CampaignWaits({ data, error, finished }: CampaignWaitsProps) {
  if (finished) return null;
  return html`<section class="waits">
    <h3>Waits for</h3>
    <${ErrorLine} error=${error} />
    <ul>
      ${(data?.waits ?? []).map((w) => html`<li data-wait=${w.kind}>${w.text}</li>`)}
    </ul>
  </section>`;
}
