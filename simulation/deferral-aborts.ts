/**
 * The operator aborts while a busy node's offer is out: in a share of the scenarios that have
 * busy agents (`deferral-scenario.ts`, `deferral-budget.ts`) and are not calm, the first time a
 * running campaign has offered a node whose agent is busy (it will answer DEFERRED), and Control
 * has not judged that answer yet, the operator aborts the campaign (without rollback). The
 * DEFERRED answer then reaches a campaign that ended: the node must be canceled as the waiting
 * nodes were, not put back to wait, or the campaign never finishes (the run's end requires it).
 * Drawn from a seed stream of its own.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { SimWorld } from "./sim-world.js";

/** The share of the eligible scenarios in which the operator aborts so. */
const SHARE = 0.5;

/** Returns the check to run after every step (a no-op in the other scenarios). */
export function deferralAborter(world: SimWorld): () => void {
  const { seed, scenario, clock, store, fleet, controls, say } = world;
  const prng = createPrng(deriveSeed(seed, 44));
  const busy = scenario.agents.some((a) => a.busyUntil !== undefined);
  let done = scenario.calm || !busy || prng.next() >= SHARE;
  return () => {
    if (done) return;
    for (const [id, entry] of store.tables.campaigns) {
      if (entry.campaign.phase !== "running") continue;
      const offered = (store.tables.nodes.get(id) ?? []).find((n) => {
        if (n.state !== "offered") return false;
        const until = fleet.agents.get(n.nodeId)?.script.busyUntil;
        return until !== undefined && clock.ms < until;
      });
      if (offered === undefined) continue;
      done = true;
      store.tables.addCommand({
        campaignId: id,
        kind: "abort",
        rollback: false,
        reason: "the operator stops this campaign while a busy node's offer is out",
        actor: "operator",
        actor_ip: "",
      });
      world.outcomeChecks.commands.push({
        campaignId: id,
        kind: "abort",
        at: clock.ms,
        rollback: false,
        phase: "running",
      });
      say(`operator aborts ${id} while busy node ${offered.nodeId}'s offer is out`);
      controls.wake(id);
      return;
    }
  };
}
