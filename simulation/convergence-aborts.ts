/**
 * The operator stops convergence: in a share of the desired-version scenarios, the first
 * convergence campaign the leader starts is aborted (without rollback) a little after it
 * started. From then on its desired version must not offer those nodes again (O4); the other
 * nodes it governs still converge (D3). Drawn from a seed stream of its own.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import { CONVERGENCE_CREATOR } from "../control/campaign/index.js";
import type { SimWorld } from "./sim-world.js";

/** The share of the desired-version scenarios in which the operator aborts a convergence. */
const SHARE = 0.4;

/** Returns the check to run after every step (a no-op in the other scenarios). */
export function convergenceAborter(world: SimWorld): () => void {
  const { seed, scenario, clock, store, controls, say } = world;
  const prng = createPrng(deriveSeed(seed, 12));
  const active = scenario.rollout.kind === "desired" && prng.next() < SHARE;
  const delayMs = Math.floor(prng.next() * 60_000);
  let seen: { id: string; at: number } | undefined;
  let done = !active;
  return () => {
    if (done) return;
    if (seen === undefined) {
      for (const [id, c] of store.tables.campaigns) {
        if (!c.createdBy.startsWith(CONVERGENCE_CREATOR) || c.campaign.phase !== "running")
          continue;
        seen = { id, at: clock.ms };
        break;
      }
      if (seen === undefined) return;
    }
    if (clock.ms < seen.at + delayMs) return;
    done = true;
    const c = store.tables.campaigns.get(seen.id)?.campaign;
    if (c === undefined || c.finishedAt !== undefined) return;
    store.tables.addCommand({
      campaignId: seen.id,
      kind: "abort",
      rollback: false,
      reason: "the operator stops this convergence",
      actor: "operator",
      actor_ip: "",
    });
    world.outcomeChecks.commands.push({ campaignId: seen.id, kind: "abort", at: clock.ms });
    say(`operator aborts convergence campaign ${seen.id}`);
    controls.wake(seen.id);
  };
}
