/**
 * Faults of the agents themselves (registry generation 2): in a share of the seeds that are not
 * calm nor on a breach's edge, one or two succeeding agents become
 *
 * - `vanish_after_upgrade` ({@link withLostAfterUpgrade}): back on the target, their machine dies
 *   for good 5 s to 3 minutes later — before their batch passes, as a rule (LA1);
 * - `fail_on_target` ({@link withReportsThatLie}): they report FAILED yet run the target, and say
 *   Hello on it with a new boot (I2, O1, RB1: a rollback must reach them too).
 *
 * Each draws from a seed stream of its own, so the rest of a seed's scenario is the same with or
 * without it.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { AgentScript, Behaviour } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";

function turn(
  s: FleetScenario,
  prng: Prng,
  share: number,
  behaviour: Behaviour,
  extra: (prng: Prng) => Partial<AgentScript>,
): FleetScenario {
  if (s.calm || s.edge || prng.next() >= share) return s;
  const succeeding = s.agents.filter((a) => a.behaviour === "succeed" && a.busyUntil === undefined);
  if (succeeding.length === 0) return s;
  const count = Math.min(succeeding.length, 1 + Math.floor(prng.next() * 2));
  const chosen = new Set<string>();
  while (chosen.size < count)
    chosen.add((succeeding[Math.floor(prng.next() * succeeding.length)] as AgentScript).id);
  return {
    ...s,
    agents: s.agents.map((a) => (chosen.has(a.id) ? { ...a, behaviour, ...extra(prng) } : a)),
  };
}

/** `s` with, in a fifth of its seeds, agents that vanish after the upgrade. */
export function withLostAfterUpgrade(s: FleetScenario): FleetScenario {
  const prng = createPrng(deriveSeed(s.seed, 61));
  return turn(s, prng, 0.2, "vanish_after_upgrade", (p) => ({
    vanishAfterMs: 5000 + Math.floor(p.next() * 175_000),
  }));
}

/** `s` with, in a fifth of its seeds, agents whose FAILED report hides that they run the target. */
export function withReportsThatLie(s: FleetScenario): FleetScenario {
  const prng = createPrng(deriveSeed(s.seed, 62));
  return turn(s, prng, 0.2, "fail_on_target", () => ({}));
}
