/**
 * DV1: a desired version is never recorded from a campaign that exceeded its `--max-failures`,
 * resumed by an operator or not. True failures are judged from ground truth, as B1 judges them:
 * agents the campaign's upgrade reached that did not only defer and do not run its target when
 * the desired version is set; the allowance is taken of all the campaign's nodes (an upper bound
 * of those not skipped).
 */
import type { Checker } from "./checkers.js";
import { versionAt } from "./ground-truth.js";
import { deferredOnly } from "./outcome-invariants.js";
import type { SimWorld } from "./sim-world.js";

/** The DV1 checker of a run. */
export function desiredBudgetChecker(w: SimWorld): Checker {
  const judged = new Set<string>();
  return {
    invariants: ["DV1"],
    step: () => {
      const out: string[] = [];
      for (const d of w.fleetStore.tables.desired.values()) {
        const key = `${d.id}@${d.setAt}`;
        if (!d.setBy.startsWith("campaign:") || judged.has(key)) continue;
        judged.add(key);
        const campaignId = d.setBy.slice("campaign:".length);
        const c = w.store.tables.campaigns.get(campaignId)?.campaign;
        const budget = c?.spec.maxFailures;
        if (c === undefined || budget === undefined) continue;
        const nodes = w.store.tables.nodes.get(campaignId) ?? [];
        const failed = nodes.filter((n) => {
          const agent = w.fleet.agents.get(n.nodeId);
          const id = `${campaignId}/${n.nodeId}/upgrade`;
          if (agent === undefined || !agent.record.received.some((o) => o.id === id)) return false;
          if (deferredOnly(agent, id)) return false;
          return versionAt(agent.record, d.setAt) !== c.spec.targetVersion;
        });
        const allowed =
          budget.kind === "count"
            ? budget.count
            : Math.floor((budget.percent * nodes.length) / 100);
        if (failed.length > allowed)
          out.push(
            `DV1: ${d.id} records ${d.target.version} as desired from ${campaignId}, whose upgrade left ${failed.length} agents off it (${failed
              .slice(0, 5)
              .map((n) => n.nodeId)
              .join(", ")}), over its max failures (${allowed} allowed)`,
          );
      }
      return out;
    },
  };
}
