/**
 * PD1, pool disruption from the agents' side: when an agent begins to act on a campaign's
 * upgrade, the agents of its pool acting at that instant on any operation Control sent (applying
 * or restarting for an upgrade, rolling back, of any campaign) are no more than the pool's
 * budget under that campaign's `disruptionBudgetPercent` (the reference's limit, of the pool's
 * agents the operator has not disabled). Judged from the run's history (`act`, `idle`,
 * `disable`), never from Control's node states: a node Control forgets to count (rolling back
 * for another campaign, say) still restarts.
 *
 * An agent that never comes back stops counting once its campaign's reconnect timeout has passed
 * since the operation was last sent to it (less {@link TOLERANCE_MS}): from then on Control may
 * judge it failed and free its slot, as the operator guide says.
 *
 * A late rollback (control/campaign/late-rollback.ts: a finished campaign's rollback, sent after
 * the campaign finished) is admitted under the same budget: when an agent begins one, the agents
 * of its pool acting at that instant, itself included, are no more than the budget under its
 * campaign's `disruptionBudgetPercent`.
 */
import type { Checker } from "./checkers.js";
import { clockToleranceMs } from "./clock-faults.js";
import { historyReader } from "./history.js";
import { refPoolLimit } from "./reference/pools.js";
import type { SimWorld } from "./sim-world.js";

/** Slack for the Control's step, its stamps and a takeover between a send and its deadline. */
const TOLERANCE_MS = 30_000;

interface Acting {
  readonly pool: string;
  readonly operationId: string;
  readonly campaignId: string;
  /** Past this virtual time the agent no longer counts (see the file's TSDoc). */
  readonly until: number;
}

/** The PD1 checker of a run. */
export function disruptionChecker(w: SimWorld): Checker {
  const read = historyReader(w.history);
  const acting = new Map<string, Acting>();
  const disabled = new Set<string>();
  const sizeOf = (pool: string) =>
    w.scenario.agents.filter((a) => a.pool === pool && !disabled.has(a.id)).length;
  const timeoutOf = (campaignId: string) =>
    w.store.tables.campaigns.get(campaignId)?.campaign.spec.reconnectTimeoutMs ?? 0;
  const lastSent = (nodeId: string, operationId: string, at: number) =>
    w.fleet.agents.get(nodeId)?.record.sent.findLast((o) => o.id === operationId && o.at <= at)
      ?.at ?? at;
  // A rollback last sent after its campaign finished (the Controls' clocks allowed for).
  const lateRollback = (
    finishedAt: number | undefined,
    e: { readonly nodeId: string; readonly operationId: string; readonly at: number },
  ) =>
    finishedAt !== undefined &&
    lastSent(e.nodeId, e.operationId, e.at) > finishedAt + clockToleranceMs(w.scenario.clockSkew);
  return {
    invariants: ["PD1"],
    step: () => {
      const out: string[] = [];
      for (const e of read()) {
        if (e.kind === "disable") disabled.add(e.nodeId);
        else if (e.kind === "idle") acting.delete(e.nodeId);
        else if (e.kind === "act") {
          const until =
            lastSent(e.nodeId, e.operationId, e.at) + timeoutOf(e.campaignId) - TOLERANCE_MS;
          acting.set(e.nodeId, { ...e, until: Math.max(until, e.at) });
          const campaign = w.store.tables.campaigns.get(e.campaignId)?.campaign;
          if (campaign === undefined) continue;
          if (e.action !== "upgrade" && !lateRollback(campaign.finishedAt, e)) continue;
          const together = [...acting.entries()].filter(
            ([, x]) => x.pool === e.pool && x.until >= e.at,
          );
          const limit = refPoolLimit(sizeOf(e.pool), campaign.spec.disruptionBudgetPercent);
          if (together.length > limit)
            out.push(
              `PD1: ${e.nodeId} began ${e.action === "upgrade" ? "" : "late rollback "}${e.operationId} while ${together.length} agents of pool "${e.pool}" were disrupted (${together
                .map(([id, x]) => `${id}: ${x.operationId}`)
                .join(", ")}), over the budget of ${limit} of ${e.campaignId}`,
            );
        }
      }
      return out;
    },
  };
}
