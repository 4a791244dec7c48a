/**
 * A previous release's Control leading for a while (registry generation 2): in three of ten
 * seeds with faults that are not calm nor on a breach's edge, at a seeded time every Control
 * process crashes and one Control of the previous release — it knows the engine features
 * `deferral` and `download_budget` only — starts alone and holds the lease for 10 s to 2 minutes;
 * then it stops and as many current Controls start as were running. Every campaign records
 * `lost_after_upgrade` and `report_seq` (`control/campaign/engine-features.ts`), so the old
 * Control must step aside from each (neither decide nor write it) while it leads: every invariant
 * still holds, and every campaign still finishes once a current Control leads again.
 *
 * Drawn from a seed stream of its own, so the rest of a seed's scenario is the same without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { SimWorld } from "./sim-world.js";

/** The engine features the previous release knows. */
export const PREVIOUS_RELEASE_FEATURES: readonly string[] = ["deferral", "download_budget"];

/** The share of the eligible scenarios that get an old Control. */
const SHARE = 0.3;

/** `s` with, for a share of its seeds, a previous release's Control leading for a while. */
export function withOldControl(s: FleetScenario): FleetScenario {
  if (s.faults.length === 0 || s.calm || s.edge) return s;
  const prng = createPrng(deriveSeed(s.seed, 64));
  if (prng.next() >= SHARE) return s;
  const at = 4000 + Math.floor(prng.next() * 20 * 60_000);
  const leadMs = 10_000 + Math.floor(prng.next() * 110_000);
  return { ...s, oldControl: { at: (s.originMs ?? 0) + at, leadMs } };
}

/** Puts the scenario's old Control on `world` (nothing without one). */
export function scheduleOldControl(world: SimWorld): void {
  const plan = world.scenario.oldControl;
  if (plan === undefined) return;
  const { queue, store, fleet, controls, say } = world;
  queue.at(plan.at, () => {
    let killed = 0;
    for (let c = controls.killLeader(); c !== undefined; c = controls.killLeader()) {
      store.endSession(c.holder);
      killed++;
    }
    fleet.dropAll();
    say(`FAULT ${killed} Control processes killed; a previous release's Control leads`);
    const old = world.startControl(PREVIOUS_RELEASE_FEATURES);
    queue.at(plan.at + plan.leadMs, () => {
      const running = controls.all.find((c) => c.holder === old && c.alive);
      if (running !== undefined) {
        running.alive = false;
        running.unlisten();
        store.endSession(old);
        fleet.dropAll();
      }
      say(`FAULT ${old} (the previous release) stops; current Controls start`);
      for (let k = 0; k < Math.max(1, killed); k++) world.startControl();
    });
  });
}
