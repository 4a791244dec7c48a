/**
 * Nodes by agent version as a bar chart in plain SVG: one bar per version, most nodes first,
 * its online part solid and its offline part pale, the counts written beside it; a yanked
 * release's bar is marked "yanked".
 */
import { html } from "htm/preact";
import type { VersionCount } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";

const ROW = 26;
const LABEL = 150;
const WIDTH = 640;
const BAR = WIDTH - LABEL - 150;

/** Props of {@link VersionChart}. */
export interface VersionChartProps {
  /** As GetFleetSummary orders them. */
  readonly versions: readonly VersionCount[];
  /** Versions of yanked releases. */
  readonly yanked: ReadonlySet<string>;
}

/** The chart of `versions`. */
export function VersionChart({ versions, yanked }: VersionChartProps) {
  const name = (v: VersionCount) =>
    `${v.version || "unknown"}${yanked.has(v.version) ? " (yanked)" : ""}`;
  const most = Math.max(1, ...versions.map((v) => v.nodes));
  const height = Math.max(1, versions.length) * ROW;
  return html`<svg
    class="version-chart"
    viewBox=${`0 0 ${WIDTH} ${height}`}
    width=${WIDTH}
    height=${height}
    role="img"
    aria-label=${versions.map((v) => `${name(v)}: ${v.nodes} nodes`).join(", ")}
  >
    ${versions.map((v, i) => {
      const y = i * ROW;
      const all = (BAR * v.nodes) / most;
      const online = (BAR * v.online) / most;
      const bad = yanked.has(v.version);
      return html`<g key=${v.version} class=${bad ? "yanked" : ""} data-version=${v.version || "unknown"} data-nodes=${v.nodes} data-online=${v.online} data-yanked=${String(bad)}>
        <text class="version-label" x=${LABEL - 8} y=${y + 17} text-anchor="end">${name(v)}</text>
        <rect class="offline" x=${LABEL} y=${y + 4} width=${all} height=${ROW - 8} rx="3"></rect>
        <rect class="online" x=${LABEL} y=${y + 4} width=${online} height=${ROW - 8} rx="3"></rect>
        <text class="count" x=${LABEL + all + 8} y=${y + 17}>${v.nodes} (${v.online} online)</text>
      </g>`;
    })}
  </svg>`;
}
