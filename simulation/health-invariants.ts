/**
 * The invariant of the health checks a release carries, judged from the simulated agents' own
 * record (`ground-truth.ts`), never from the engine's functions:
 *
 * - H1: no node of a campaign whose agent failed the target's health checks on that campaign's
 *   upgrade (and so reverted it before it ever connected on the target) is `succeeded`. (Its
 *   failure counts toward I1, O2 and B1 as any failure: the agent ends off the target.)
 */
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";

const upgradeId = (campaignId: string, nodeId: string) => `${campaignId}/${nodeId}/upgrade`;

/** H1 over every campaign at `now`. */
export function healthViolations(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  _now: number,
): string[] {
  const found: string[] = [];
  for (const [campaignId, nodes] of store.tables.nodes) {
    for (const n of nodes) {
      const r = fleet.agents.get(n.nodeId)?.record;
      if (r === undefined || !(r.healthFailures ?? []).includes(upgradeId(campaignId, n.nodeId)))
        continue;
      if (n.state === "succeeded") {
        found.push(
          `H1: ${n.nodeId} failed the health checks of ${campaignId}'s upgrade, yet the campaign says it succeeded`,
        );
      }
    }
  }
  return found;
}
