/**
 * Database errors that are not an outage (registry generation 4): in a share of the seeds with
 * faults that are not calm nor on a breach's edge, single calls of the store fail from the
 * first campaign's start on, each with a seeded probability of up to 3 %: half before they write
 * (a statement refused: a serialization failure, a deadlock, a statement timeout), half after
 * their commit applied (the connection lost once COMMIT was sent, so the caller cannot tell).
 * Every part of Control that writes must retry what failed without losing or doubling a write:
 * a decision, a report, an offer's stamp, a gate's result, a notification.
 *
 * Drawn from seed streams of their own (one for whether and how often, one per call), so the
 * rest of a seed's scenario is the same without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { SimWorld } from "./sim-world.js";

/** The share of the eligible scenarios whose database calls fail now and then. */
const SHARE = 0.3;
/** The most likely a single call is to fail. */
const MAX_RATE = 0.03;

/** `s` with, for a share of its seeds with faults, database calls that fail now and then. */
export function withDbErrors(s: FleetScenario): FleetScenario {
  if (s.faults.length === 0 || s.calm || s.edge) return s;
  const prng = createPrng(deriveSeed(s.seed, 71));
  if (prng.next() >= SHARE) return s;
  return { ...s, dbErrors: { rate: 0.002 + prng.next() * (MAX_RATE - 0.002) } };
}

/** Makes `world`'s store fail single calls as its scenario says, from the first campaign on. */
export function scheduleDbErrors(world: SimWorld): void {
  const errors = world.scenario.dbErrors;
  if (errors === undefined) return;
  const calls = createPrng(deriveSeed(world.scenario.seed, 72));
  const from = Math.min(...world.scenario.campaigns.map((c) => c.at));
  world.queue.at(Number.isFinite(from) ? from : 0, () => {
    world.store.injectErrors(() => {
      if (calls.next() >= errors.rate) return undefined;
      return calls.next() < 0.5 ? "before" : "after_commit";
    });
  });
}
