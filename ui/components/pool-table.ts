/**
 * Nodes per pool: how many, how many online, offline and revoked (cut off by an
 * administrator: not counted offline, as `agentctl node list` says revoked), how many
 * disabled.
 */
import { html } from "htm/preact";
import type { PoolCount } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";

/** The table of `pools`. */
export function PoolTable({ pools }: { pools: readonly PoolCount[] }) {
  return html`<table class="pools">
    <thead><tr><th>Pool</th><th>Nodes</th><th>Online</th><th>Offline</th><th>Revoked</th><th>Disabled</th></tr></thead>
    <tbody>
      ${pools.map((p) => {
        const offline = p.nodes - p.online - p.revoked;
        return html`<tr key=${p.pool} data-pool=${p.pool}>
          <td>${p.pool}</td>
          <td>${p.nodes}</td>
          <td class="online-count">${p.online}</td>
          <td class=${offline > 0 ? "offline-count warn" : "offline-count"}>${offline}</td>
          <td class="revoked-count">${p.revoked}</td>
          <td>${p.disabled}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}
