/**
 * The invariants of deferral, judged from the simulated agents' own record (`ground-truth.ts`),
 * never from the engine's functions:
 *
 * - DF1: a node whose agent never applied a campaign's upgrade and answered its latest offer
 *   DEFERRED is never failed or timed out in it (a deferral is not a failure), unless the
 *   offer could not be sent at all (`offer_failed`).
 * - DF2: no node is skipped `deferred` before the campaign's max defer has passed since its
 *   agent's first DEFERRED answer to that campaign's upgrade, nor without any such answer.
 * - DF3: a node skipped `deferred` never applied that campaign's upgrade.
 */

import { maxDeferOf } from "../control/campaign/index.js";
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";

const upgradeId = (campaignId: string, nodeId: string) => `${campaignId}/${nodeId}/upgrade`;

/** DF1–DF3 over every campaign. */
export function deferralViolations(store: MemoryCampaignStore, fleet: SimFleet): string[] {
  const found: string[] = [];
  for (const [campaignId, nodes] of store.tables.nodes) {
    const c = store.tables.campaigns.get(campaignId)?.campaign;
    if (c === undefined) continue;
    for (const n of nodes) {
      const agent = fleet.agents.get(n.nodeId);
      if (agent === undefined) continue;
      const id = upgradeId(campaignId, n.nodeId);
      const deferrals = (agent.record.deferrals ?? []).filter((x) => x.operationId === id);
      const applied = (agent.applied.get(id) ?? 0) > 0;
      const lastReport = agent.record.reports.filter((r) => r.operationId === id).at(-1);
      if (
        (n.state === "failed" || n.state === "timed_out") &&
        n.code !== "offer_failed" &&
        !applied &&
        deferrals.length > 0 &&
        lastReport?.phase === "DEFERRED"
      ) {
        found.push(
          `DF1: ${n.nodeId} is ${n.state}/${n.code} in ${campaignId} though it only deferred`,
        );
      }
      if (n.state !== "skipped" || n.code !== "deferred") continue;
      const first = deferrals[0]?.at;
      if (first === undefined) {
        found.push(`DF2: ${n.nodeId} is skipped deferred in ${campaignId} but never deferred`);
      } else if ((n.finishedAt ?? 0) - first < maxDeferOf(c.spec)) {
        found.push(
          `DF2: ${n.nodeId} was skipped deferred in ${campaignId} ${(n.finishedAt ?? 0) - first} ms after its first deferral, before its max defer of ${maxDeferOf(c.spec)} ms`,
        );
      }
      if (applied)
        found.push(`DF3: ${n.nodeId} is skipped deferred in ${campaignId} but applied its upgrade`);
    }
  }
  return found;
}
