/**
 * RB1 at the end of a run: no agent that a campaign ended `rolled_back` sent its rollback ends
 * on that campaign's target, unless another campaign sent it something since. Judged from each
 * agent's record (the rollback it received, what it runs at the end); O1 judges the breached
 * batch's agents that took the upgrade the same way.
 */
import type { Checker } from "./checkers.js";
import type { SimWorld } from "./sim-world.js";

/** The RB1 checker of a run. */
export function rolledBackChecker(w: SimWorld): Checker {
  return {
    invariants: ["RB1"],
    end: () => {
      const out: string[] = [];
      for (const { campaign: c } of w.store.tables.campaigns.values()) {
        if (c.phase !== "rolled_back") continue;
        for (const [nodeId, agent] of w.fleet.agents) {
          const rollback = agent.record.received.find(
            (o) => o.campaignId === c.id && o.kind === "rollback",
          );
          if (rollback === undefined || agent.version !== c.spec.targetVersion) continue;
          const later = agent.record.received.some(
            (o) => o.campaignId !== c.id && o.at > rollback.at,
          );
          if (!later)
            out.push(
              `RB1: ${c.id} ended rolled_back, but ${nodeId}, sent its rollback, ends on ${c.spec.targetVersion}`,
            );
        }
      }
      return out;
    },
  };
}
