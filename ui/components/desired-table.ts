/**
 * Every desired version with its convergence: converged, behind (how many nodes, and why,
 * each reason with its count and the first nodes), or halted (why, and the nodes whose
 * failures halted it).
 */
import { html } from "htm/preact";
import type { DesiredConvergence } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { formatTime } from "../format.js";
import { formatSelector } from "../selector.js";

function Reasons({ c }: { c: DesiredConvergence }) {
  if (c.reasons.length === 0) return null;
  return html`<ul class="reasons">
    ${c.reasons.map(
      (r) => html`<li key=${r.code} data-reason=${r.code}>
        <strong>${r.nodes}</strong> ${r.text}<span class="muted"> (${r.nodeIds.join(", ")}${r.nodes > r.nodeIds.length ? ", …" : ""})</span>
      </li>`,
    )}
  </ul>`;
}

/** One row per desired version (newest first, as GetFleetSummary orders them). */
export function DesiredTable({ desired }: { desired: readonly DesiredConvergence[] }) {
  if (desired.length === 0) {
    return html`<p class="muted">No desired version yet: a completed campaign records one, or <code>agentctl desired set</code>.</p>`;
  }
  return html`<table class="desired">
    <thead><tr><th>Selector</th><th>Version</th><th>State</th><th>Converged</th><th>Why behind</th><th>Set</th></tr></thead>
    <tbody>
      ${desired.map((c) => {
        const d = c.desired;
        return html`<tr key=${d?.id} data-desired=${d?.id} data-state=${c.state}>
          <td>${formatSelector(d?.selector, d?.exclude)}</td>
          <td>${d?.targetVersion}</td>
          <td><span class=${`convergence ${c.state}`}>${c.state}</span></td>
          <td>${d?.converged} / ${d?.nodes}${c.behind > 0 ? html`<div class="muted">${c.behind} behind</div>` : ""}${c.ahead > 0 ? html`<div class="muted ahead" title=${`ahead of ${d?.targetVersion}: ${c.aheadNodeIds.join(", ")}`}>${c.ahead} ahead</div>` : ""}</td>
          <td>
            ${c.state === "halted" && html`<p class="halted-reason">${d?.haltedReason} <span class="muted">(${formatTime(d?.haltedAt)})</span></p>`}
            ${c.failedNodeIds.length > 0 && html`<p class="failures">failed: ${c.failedNodeIds.join(", ")}</p>`}
            <${Reasons} c=${c} />
          </td>
          <td>${formatTime(d?.setAt)}<div class="muted">${d?.setBy}</div></td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}
