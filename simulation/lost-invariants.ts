/**
 * LA1, lost after the upgrade: a node whose agent came back on a campaign's target after its
 * upgrade and whose machine then went away for good is never `succeeded` unless the checker saw
 * it succeeded before the machine went (its batch passed first). Judged from the run's history
 * (`connect`, `gone`) and Control's claim (the node's state, at each step).
 */
import type { Checker } from "./checkers.js";
import { historyReader } from "./history.js";
import type { SimWorld } from "./sim-world.js";

/** The LA1 checker of a run. */
export function lostAfterUpgradeChecker(w: SimWorld): Checker {
  const read = historyReader(w.history);
  /** Nodes seen succeeded, by `campaign/node`. */
  const succeeded = new Set<string>();
  /** When each agent's machine went away for good. */
  const gone = new Map<string, number>();
  const judged = new Set<string>();
  return {
    invariants: ["LA1"],
    step: (now) => {
      for (const e of read()) if (e.kind === "gone") gone.set(e.nodeId, e.at);
      const out: string[] = [];
      for (const [campaignId, nodes] of w.store.tables.nodes) {
        const target = w.store.tables.campaigns.get(campaignId)?.campaign.spec.targetVersion;
        for (const n of nodes) {
          if (n.state !== "succeeded") continue;
          const key = `${campaignId}/${n.nodeId}`;
          if (succeeded.has(key)) continue;
          succeeded.add(key);
          const went = gone.get(n.nodeId);
          if (went === undefined || judged.has(key)) continue;
          judged.add(key);
          const record = w.fleet.agents.get(n.nodeId)?.record;
          const upgradeAt = record?.received.find(
            (o) => o.id === `${campaignId}/${n.nodeId}/upgrade`,
          )?.at;
          if (upgradeAt === undefined || upgradeAt > went) continue;
          const backOnTarget = record?.connects.some(
            (c) => c.at > upgradeAt && c.at <= went && c.version === target,
          );
          if (backOnTarget)
            out.push(
              `LA1: ${n.nodeId} of ${campaignId} is succeeded (seen at ${now}), but its machine went away for good at ${went}, after it came back on ${target} and before its batch passed`,
            );
        }
      }
      return out;
    },
  };
}
