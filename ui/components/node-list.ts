/**
 * The fleet's nodes, a page at a time, searched by a part of the node id and filtered by
 * pool, agent version, whether they are online and the campaign they belong to, sorted by
 * node id, pool, version or last seen (all done by the admin API: 10,000 nodes are never
 * read at once), with the campaign each is in now; each node id opens the node's page.
 */
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { formatTime } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { type NodeSort, nextSort, orderByOf, sortMark } from "../node-sort.js";
import { useSession } from "../session.js";
import { useDebounced } from "../use-debounced.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";
import { FilterField } from "./filter-field.js";

const PAGE_SIZE = 100;
const ONLINE_CHOICES = [
  ["", "any"],
  ["true", "online"],
  ["false", "offline"],
] as const;

/** The node list page. */
export function NodeList() {
  const { api } = useSession();
  const [pool, setPool] = useState("");
  const [version, setVersion] = useState("");
  const [online, setOnline] = useState("");
  const [campaign, setCampaign] = useState("");
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<NodeSort>({ field: "node_id", descending: false });
  const filters = useDebounced({
    nodeIdContains: search.trim(),
    pool: pool.trim(),
    agentVersion: version.trim(),
    online,
    campaignId: campaign.trim(),
  });
  const [pages, setPages] = useState<string[]>([""]);
  const pageToken = pages[pages.length - 1] ?? "";
  const { data, error } = usePoll(
    (signal) =>
      api.nodes.listNodes(
        {
          nodeIdContains: filters.nodeIdContains,
          pool: filters.pool,
          agentVersion: filters.agentVersion,
          campaignId: filters.campaignId,
          ...(filters.online === "" ? {} : { online: filters.online === "true" }),
          orderBy: orderByOf(sort),
          pageSize: PAGE_SIZE,
          pageToken,
        },
        { signal },
      ),
    [api, JSON.stringify(filters), orderByOf(sort), pageToken],
  );
  const refilter = (set: (v: string) => void) => (value: string) => {
    set(value);
    setPages([""]);
  };
  const nodes = data?.nodes ?? [];
  const sortable = (field: NodeSort["field"], label: string) => {
    const mark = sortMark(sort, field);
    return html`<th aria-sort=${mark === "" ? "none" : sort.descending ? "descending" : "ascending"}>
      <button type="button" class="link sort" data-sort=${field} title=${`sort by ${label.toLowerCase()}`} onClick=${() => {
        setSort(nextSort(sort, field));
        setPages([""]);
      }}>${label}${mark}</button>
    </th>`;
  };
  return html`<section>
    <h2>Nodes ${data && html`<span class="muted">${data.totalSize}</span>`}</h2>
    <form class="filters" onSubmit=${(e: Event) => e.preventDefault()}>
      <${FilterField} label="Node id" name="node-id" value=${search} onChange=${refilter(setSearch)} placeholder="web-01" />
      <${FilterField} label="Pool" name="pool" value=${pool} onChange=${refilter(setPool)} />
      <${FilterField} label="Version" name="version" value=${version} onChange=${refilter(setVersion)} placeholder="1.4.0" />
      <${FilterField} label="Online" name="online" value=${online} onChange=${refilter(setOnline)} options=${ONLINE_CHOICES} />
      <${FilterField} label="Campaign" name="campaign" value=${campaign} onChange=${refilter(setCampaign)} placeholder="c-…" />
    </form>
    <${ErrorLine} error=${error} />
    ${data && nodes.length === 0 && html`<p class="muted">No node matches.</p>`}
    ${
      nodes.length > 0 &&
      html`<table class="nodes">
      <thead><tr>${sortable("node_id", "Node")}${sortable("pool", "Pool")}${sortable("agent_version", "Version")}<th>Online</th><th>Campaign</th><th>Platform</th>${sortable("last_seen", "Last seen")}<th>Labels</th></tr></thead>
      <tbody>
        ${nodes.map(
          (n) => html`<tr key=${n.nodeId} data-node=${n.nodeId}>
            <td><a href=${hrefOf({ page: "node", id: n.nodeId })}><code>${n.nodeId}</code></a>${!n.enabled && html` <span class="badge">disabled</span>`}${n.trustFrozen && html` <span class="badge" data-trust="frozen" title=${`TUF metadata frozen since ${formatTime(n.trustFrozenSince)}: new releases are refused. ${n.trustReason}`}>frozen</span>`}</td>
            <td>${n.pool}</td>
            <td>${n.agentVersion}${n.agentVersionYanked && html` <span class="badge" data-yanked="true" title="an operator yanked this release">yanked</span>`}</td>
            <td>${
              n.revoked
                ? html`<span class="dot off"></span><span data-revoked="true">revoked</span>`
                : html`<span class=${n.online ? "dot on" : "dot off"}></span>${n.online ? "online" : "offline"}`
            }</td>
            <td>${n.activeCampaignId && html`<a href=${hrefOf({ page: "campaign", id: n.activeCampaignId })}>${n.activeCampaignId}</a>`}</td>
            <td>${n.platform}</td>
            <td>${formatTime(n.lastSeen)}</td>
            <td class="labels">${Object.entries(n.labels).map(([k, v]) => html`<span class="label">${k}=${v}</span>`)}</td>
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
