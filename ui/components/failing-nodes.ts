/**
 * The nodes of a campaign that failed (failed, timed out, rollback failed), with the code and
 * message each reported, a page at a time. Read again whenever the campaign's count of them
 * changes, so the list follows the live page without polling every row.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { countIn, FAILED_STATES, formatTime, stateName } from "../format.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";

const PAGE_SIZE = 50;

/** The failing nodes of `campaign`. */
export function FailingNodes({ campaign }: { campaign: Campaign }) {
  const { api } = useSession();
  const failed = countIn(campaign.counts, FAILED_STATES);
  // The page tokens of the pages before the one shown; the first page has "".
  const [pages, setPages] = useState<string[]>([""]);
  const pageToken = pages[pages.length - 1] ?? "";
  const { data, error } = usePoll(
    (signal) =>
      failed === 0
        ? Promise.resolve(undefined)
        : api.campaigns.listCampaignNodes(
            { campaignId: campaign.id, states: [...FAILED_STATES], pageSize: PAGE_SIZE, pageToken },
            { signal },
          ),
    [api, campaign.id, failed, pageToken],
    30_000,
  );
  const nodes = data?.nodes ?? [];
  return html`<section class="failing" data-failed=${failed}>
    <h3>Failing nodes <span class="muted">${failed}</span></h3>
    <${ErrorLine} error=${error} />
    ${failed === 0 && html`<p class="muted">No node has failed.</p>`}
    ${
      nodes.length > 0 &&
      html`<table class="failing-nodes">
      <thead><tr><th>Node</th><th>Batch</th><th>State</th><th>Code</th><th>Message</th><th>Version</th><th>Pool</th><th>Finished</th></tr></thead>
      <tbody>
        ${nodes.map(
          (n) => html`<tr key=${n.nodeId} data-node=${n.nodeId}>
            <td><code>${n.nodeId}</code></td>
            <td>${n.batch + 1}</td>
            <td class="state-failed">${stateName(n.state)}</td>
            <td><code>${n.code}</code></td>
            <td class="message">${n.message}</td>
            <td>${n.version || n.previousVersion}</td>
            <td>${n.pool}</td>
            <td>${formatTime(n.finishedAt)}</td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
    <div class="pager">
      ${pages.length > 1 && html`<button class="link" onClick=${() => setPages(pages.slice(0, -1))}>← Previous</button>`}
      ${data?.nextPageToken && html`<button class="link" onClick=${() => setPages([...pages, data.nextPageToken])}>Next →</button>`}
    </div>
  </section>`;
}
