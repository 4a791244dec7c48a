/**
 * W3, from the network's side: no agent is sent a new upgrade (the first send of its operation
 * id) while every window that governs the node is closed — the campaign's own windows, or, for a
 * convergence campaign of a desired version a campaign set, that campaign's windows. Judged from
 * each agent's record of sends (`ground-truth.ts`) by the reference wall clock
 * (`reference/windows.ts`), a few seconds' slack for the outbox's send after the decision.
 */
import { CONVERGENCE_CREATOR } from "../control/campaign/index.js";
import type { Checker } from "./checkers.js";
import { clockToleranceMs } from "./clock-faults.js";
import { refWindowOpen } from "./reference/windows.js";
import type { SimWorld } from "./sim-world.js";

/** How long after the decision its send may come (the outbox sends in the same step, as a rule). */
const SLACK_MS = 5000;

/** The W3 checker of a run. */
export function windowOfferChecker(w: SimWorld): Checker {
  const read = new Map<string, number>();
  const seen = new Set<string>();
  const governing = (campaignId: string) => {
    const entry = w.store.tables.campaigns.get(campaignId);
    if (entry === undefined) return undefined;
    const own = entry.campaign.spec.windows ?? [];
    if (!entry.createdBy.startsWith(CONVERGENCE_CREATOR)) return { windows: own, by: campaignId };
    const d = w.fleetStore.tables.desired.get(entry.createdBy.slice(CONVERGENCE_CREATOR.length));
    const setter = d?.setBy.startsWith("campaign:")
      ? w.store.tables.campaigns.get(d.setBy.slice("campaign:".length))
      : undefined;
    const windows = setter?.campaign.spec.windows ?? [];
    return windows.length > 0
      ? { windows, by: setter?.campaign.id ?? campaignId }
      : { windows: own, by: campaignId };
  };
  return {
    invariants: ["W3"],
    step: () => {
      const out: string[] = [];
      for (const [nodeId, agent] of w.fleet.agents) {
        const sent = agent.record.sent;
        const from = read.get(nodeId) ?? 0;
        if (from === sent.length) continue;
        read.set(nodeId, sent.length);
        for (const o of sent.slice(from)) {
          if (o.kind !== "upgrade" || seen.has(o.id)) continue;
          seen.add(o.id);
          const g = governing(o.campaignId);
          if (g === undefined || g.windows.length === 0) continue;
          // The Control judged the window on its own clock (`clock-faults.ts`): off by up to `skew`.
          const skew = clockToleranceMs(w.scenario.clockSkew);
          if (
            refWindowOpen(g.windows, o.at + skew) ||
            refWindowOpen(g.windows, o.at - SLACK_MS - skew)
          )
            continue;
          out.push(
            `W3: ${nodeId} was sent ${o.id} at ${new Date(o.at).toISOString()}, outside every window of ${g.by}, which govern it`,
          );
        }
      }
      return out;
    },
  };
}
