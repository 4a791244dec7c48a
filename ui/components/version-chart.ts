/**
 * Nodes by agent version as a bar chart in plain SVG: one bar per version, most nodes first,
 * its online part solid and its offline part pale, the counts written beside it.
 */
import { html } from "htm/preact";
import type { VersionCount } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";

const ROW = 26;
const LABEL = 110;
const WIDTH = 640;
const BAR = WIDTH - LABEL - 150;

/** The chart of `versions` (as GetFleetSummary orders them). */
export function VersionChart({ versions }: { versions: readonly VersionCount[] }) {
  const most = Math.max(1, ...versions.map((v) => v.nodes));
  const height = Math.max(1, versions.length) * ROW;
  return html`<svg
    class="version-chart"
    viewBox=${`0 0 ${WIDTH} ${height}`}
    width=${WIDTH}
    height=${height}
    role="img"
    aria-label=${versions.map((v) => `${v.version || "unknown"}: ${v.nodes} nodes`).join(", ")}
  >
    ${versions.map((v, i) => {
      const y = i * ROW;
      const all = (BAR * v.nodes) / most;
      const online = (BAR * v.online) / most;
      return html`<g key=${v.version} data-version=${v.version || "unknown"} data-nodes=${v.nodes} data-online=${v.online}>
        <text class="version-label" x=${LABEL - 8} y=${y + 17} text-anchor="end">${v.version || "unknown"}</text>
        <rect class="offline" x=${LABEL} y=${y + 4} width=${all} height=${ROW - 8} rx="3"></rect>
        <rect class="online" x=${LABEL} y=${y + 4} width=${online} height=${ROW - 8} rx="3"></rect>
        <text class="count" x=${LABEL + all + 8} y=${y + 17}>${v.nodes} (${v.online} online)</text>
      </g>`;
    })}
  </svg>`;
}
