/** The campaigns, newest first, read again every few seconds. */
import { html } from "htm/preact";
import { formatTime } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";
import { PhaseBadge } from "./phase-badge.js";
import { ProgressBar } from "./progress-bar.js";

/** The campaigns page. */
export function CampaignList() {
  const { api, role } = useSession();
  const { data, error } = usePoll(
    (signal) => api.campaigns.listCampaigns({ pageSize: 100 }, { signal }),
    [api],
  );
  const campaigns = data?.campaigns ?? [];
  return html`<section>
    <h2>Campaigns</h2>
    ${role === "operator" && html`<p><a class="button" href=${hrefOf({ page: "start" })}>Start a campaign</a></p>`}
    <${ErrorLine} error=${error} />
    ${data && campaigns.length === 0 && html`<p class="muted">No campaign yet: <code>agentctl campaign start</code> or the start form starts one.</p>`}
    ${
      campaigns.length > 0 &&
      html`<table class="campaigns">
      <thead>
        <tr><th>Campaign</th><th>Version</th><th>Phase</th><th>Batch</th><th>Progress</th><th>Nodes</th><th>Started</th><th>By</th></tr>
      </thead>
      <tbody>
        ${campaigns.map(
          (c) => html`<tr key=${c.id} data-campaign=${c.id}>
            <td><a href=${hrefOf({ page: "campaign", id: c.id })}>${c.id}</a></td>
            <td>${c.spec?.targetVersion}</td>
            <td><${PhaseBadge} phase=${c.phase} /></td>
            <td>${c.currentBatch + 1} / ${c.batches.length}</td>
            <td class="wide"><${ProgressBar} counts=${c.counts} total=${c.nodeCount} /></td>
            <td>${c.nodeCount}</td>
            <td>${formatTime(c.createdAt)}</td>
            <td>${c.createdBy}</td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
  </section>`;
}
