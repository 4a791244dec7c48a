/**
 * One node (`#/nodes/ID`), what `agentctl node show` prints: its state (online, offline or
 * revoked; disabled, pending, frozen), version (marked when its release is yanked), pool,
 * labels (the ones an administrator assigned marked), when it was first and last seen, and
 * the campaigns that included it, newest first. Read again every few seconds.
 */
import { html } from "htm/preact";
import type { Node } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { formatTime } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";
import { ErrorLine } from "./error-line.js";
import { PhaseBadge } from "./phase-badge.js";

/** How many of the node's campaigns the page lists. */
const CAMPAIGNS_SHOWN = 20;

/** online, offline or revoked, with disabled, pending and frozen after it: as `node show` says. */
export function nodeStatusText(node: Node): string {
  const state = node.revoked ? "revoked" : node.online ? "online" : "offline";
  const extra = [
    ...(node.enabled ? [] : ["disabled"]),
    ...(node.pending ? ["pending approval"] : []),
    ...(node.trustFrozen ? ["frozen"] : []),
  ];
  return [state, ...extra].join(", ");
}

/** The node's facts, as `agentctl node show` lists them. */
function NodeFacts({ node }: { node: Node }) {
  const labels = Object.entries(node.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const fact = (name: string, value: unknown, key = name) =>
    html`<dt>${name}</dt><dd data-fact=${key}>${value}</dd>`;
  return html`<dl class="facts node-facts">
    ${fact(
      "Status",
      html`<span class=${node.online ? "dot on" : "dot off"}></span>${nodeStatusText(node)}`,
      "status",
    )}
    ${fact(
      "Version",
      node.agentVersion === ""
        ? "-"
        : html`${node.agentVersion}${node.agentVersionYanked && html` <span class="badge" data-yanked="true" title="an operator yanked this release">yanked</span>`}`,
      "version",
    )}
    ${fact("Previous version", node.previousVersion || "-", "previous")}
    ${fact("Confirmed sequence", node.confirmedSequence.toString(), "sequence")}
    ${fact("Pool", node.pool, "pool")}
    ${fact("Platform", node.platform || "-", "platform")}
    ${fact(
      "Labels",
      labels.length === 0
        ? "-"
        : labels.map(
            ([k, v]) =>
              html`<span class="label" title=${k in node.assignedLabels ? "assigned by an administrator" : "reported by the node"}>${k}=${v}</span>`,
          ),
      "labels",
    )}
    ${fact("Capabilities", node.capabilities.join(", ") || "-", "capabilities")}
    ${fact("Control", node.heldBy || "-", "control")}
    ${fact("Boot id", node.bootId || "-", "boot")}
    ${fact("First seen", formatTime(node.firstSeen), "first-seen")}
    ${fact("Last seen", formatTime(node.lastSeen), "last-seen")}
    ${fact("Enrolled by", node.certificateEnrolled ? "client certificate" : "join token", "enrolled-by")}
    ${fact(
      "Active campaign",
      node.activeCampaignId
        ? html`<a href=${hrefOf({ page: "campaign", id: node.activeCampaignId })}>${node.activeCampaignId}</a>`
        : "-",
      "campaign",
    )}
    ${node.resetPending && fact("Reset", "its next join-token enrollment is accepted once", "reset")}
    ${
      node.trustFrozen &&
      fact(
        "Trust",
        `frozen since ${formatTime(node.trustFrozenSince)}: new releases are refused; ${node.trustReason || "no reason given"}`,
        "trust",
      )
    }
  </dl>`;
}

/** The campaigns that included the node, newest first. */
function NodeCampaigns({ nodeId }: { nodeId: string }) {
  const { api } = useSession();
  const { data, error } = usePoll(
    (signal) => api.campaigns.listCampaigns({ nodeId, pageSize: CAMPAIGNS_SHOWN }, { signal }),
    [api, nodeId],
  );
  const campaigns = data?.campaigns ?? [];
  return html`<h3>Campaigns</h3>
    <${ErrorLine} error=${error} />
    ${data && campaigns.length === 0 && html`<p class="muted">No campaign included this node.</p>`}
    ${
      campaigns.length > 0 &&
      html`<table class="node-campaigns">
        <thead><tr><th>Campaign</th><th>Version</th><th>Phase</th><th>Started</th><th>By</th></tr></thead>
        <tbody>
          ${campaigns.map(
            (c) => html`<tr key=${c.id} data-campaign=${c.id}>
              <td><a href=${hrefOf({ page: "campaign", id: c.id })}>${c.id}</a></td>
              <td>${c.spec?.targetVersion}</td>
              <td><${PhaseBadge} phase=${c.phase} /></td>
              <td>${formatTime(c.createdAt)}</td>
              <td>${c.createdBy}</td>
            </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${data?.nextPageToken && html`<p class="muted">The ${CAMPAIGNS_SHOWN} newest shown: <code>agentctl campaign list --node ${nodeId}</code> lists all.</p>`}`;
}

/** The node page. */
export function NodePage({ id }: { id: string }) {
  const { api } = useSession();
  const { data, error } = usePoll(
    (signal) => api.nodes.getNode({ nodeId: id }, { signal }),
    [api, id],
  );
  const node = data?.node;
  return html`<section class="node-page" data-node=${id}>
    <p><a href=${hrefOf({ page: "nodes" })}>← Nodes</a></p>
    <h2>Node <code>${id}</code></h2>
    <${ErrorLine} error=${error} />
    ${node && html`<${NodeFacts} node=${node} />`}
    ${node && html`<${NodeCampaigns} nodeId=${id} />`}
  </section>`;
}
