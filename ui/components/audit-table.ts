/**
 * Audit events, newest first, a page at a time: who did what to which campaign or node, and
 * when. Filters are the admin API's (campaign, action, actor).
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { formatTime } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";

/** Props of {@link AuditTable}. */
export interface AuditTableProps {
  readonly campaignId?: string;
  readonly action?: string;
  readonly actor?: string;
  /** Anything that changes when new events may exist (reads again at once). */
  readonly version?: unknown;
  readonly pageSize?: number;
}

/** A table of audit events. */
export function AuditTable({
  campaignId = "",
  action = "",
  actor = "",
  version,
  pageSize = 25,
}: AuditTableProps) {
  const { api } = useSession();
  const [pages, setPages] = useState<string[]>([""]);
  const pageToken = pages[pages.length - 1] ?? "";
  const { data, error } = usePoll(
    (signal) =>
      api.audit.listAuditEvents({ campaignId, action, actor, pageSize, pageToken }, { signal }),
    [api, campaignId, action, actor, pageToken, version],
    10_000,
  );
  const events = data?.events ?? [];
  return html`<div class="audit">
    <${ErrorLine} error=${error} />
    ${data && events.length === 0 && html`<p class="muted">No event.</p>`}
    ${
      events.length > 0 &&
      html`<table class="audit-events">
      <thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Campaign</th><th>Node</th><th>Message</th></tr></thead>
      <tbody>
        ${events.map(
          (e) => html`<tr key=${String(e.id)} data-action=${e.action}>
            <td>${formatTime(e.time)}</td>
            <td>${e.actor}${e.actorIp && html` <span class="muted">${e.actorIp}</span>`}</td>
            <td><code>${e.action}</code></td>
            <td>${e.campaignId && html`<a href=${hrefOf({ page: "campaign", id: e.campaignId })}>${e.campaignId}</a>`}</td>
            <td>${e.nodeId && html`<code>${e.nodeId}</code>`}</td>
            <td class="message">${e.message}</td>
          </tr>`,
        )}
      </tbody>
    </table>`
    }
    <div class="pager">
      ${pages.length > 1 && html`<button class="link" onClick=${() => setPages(pages.slice(0, -1))}>← Newer</button>`}
      ${data?.nextPageToken && html`<button class="link" onClick=${() => setPages([...pages, data.nextPageToken])}>Older →</button>`}
    </div>
  </div>`;
}
