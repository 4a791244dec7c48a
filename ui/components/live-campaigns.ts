/**
 * The campaigns in flight (running, paused, rolling back) with what each waits for next, as
 * `agentctl campaign why` says it: the first of its current batch's waits.
 */
import { html } from "htm/preact";
import { type Campaign, CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { hrefOf } from "../hash-route.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";
import { PhaseBadge } from "./phase-badge.js";
import { ProgressBar } from "./progress-bar.js";

/** The phases of a campaign in flight. */
export const LIVE_PHASES = [
  CampaignPhase.RUNNING,
  CampaignPhase.PAUSED,
  CampaignPhase.ROLLING_BACK,
];

function LiveRow({ c }: { c: Campaign }) {
  const { api } = useSession();
  const { data, error } = usePoll(
    (signal) => api.campaignWaits.getCampaignWaits({ id: c.id }, { signal }),
    [api, c.id, c.phase, c.currentBatch],
    5000,
  );
  const next = data?.waits[0];
  return html`<tr data-campaign=${c.id}>
    <td><a href=${hrefOf({ page: "campaign", id: c.id })}>${c.id}</a></td>
    <td>${c.spec?.targetVersion}</td>
    <td><${PhaseBadge} phase=${c.phase} /></td>
    <td>${c.currentBatch + 1} / ${c.batches.length}</td>
    <td class="wide"><${ProgressBar} counts=${c.counts} total=${c.nodeCount} /></td>
    <td class="next-event" data-wait=${next?.kind ?? ""}>${next?.text ?? ""}<${ErrorLine} error=${error} /></td>
  </tr>`;
}

/** The table of `campaigns` (those in flight). */
export function LiveCampaigns({ campaigns }: { campaigns: readonly Campaign[] }) {
  if (campaigns.length === 0) return html`<p class="muted">No campaign in flight.</p>`;
  return html`<table class="live-campaigns">
    <thead><tr><th>Campaign</th><th>Version</th><th>Phase</th><th>Batch</th><th>Progress</th><th>Next</th></tr></thead>
    <tbody>${campaigns.map((c) => html`<${LiveRow} key=${c.id} c=${c} />`)}</tbody>
  </table>`;
}
