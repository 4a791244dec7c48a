/**
 * A burst of convergence failures in a convergence campaign larger than its pool budget: in a
 * share of the desired-version scenarios whose campaigns have a disruption budget of 20 % or
 * less and no yank, five to eight agents of a group and pool of their own ({@link BURST_GROUP})
 * enroll together early in the run, every one refusing or failing its upgrade, and a minute
 * later the operator sets the target as their desired version (burst limit 3, the campaigns'
 * budget: `convergence-burst-events.ts`). One convergence campaign holds them all while the
 * pool budget lets one upgrade at a time, so the burst limit is reached with nodes of that
 * campaign still waiting: none of them may be offered from the moment of the halt (O4). Drawn
 * from a seed stream of its own, so the rest of a seed's scenario is the same with or without it.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import { DEFAULT_CONVERGENCE_MAX_FAILURES } from "../control/campaign/index.js";
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";

/** The `group` label and the pool of a burst's agents; no campaign of a scenario selects it. */
export const BURST_GROUP = "burst";
/** How long after the burst's agents enroll the operator sets their desired version. */
export const BURST_SET_AFTER_MS = 60_000;

const MIN = 60_000;
/** The share of the eligible scenarios that get a burst. */
const SHARE = 0.6;
/** The largest campaign budget that keeps a burst's pool at one upgrade at a time. */
const MAX_BUDGET_PERCENT = 20;
/** How many agents enroll in a burst: more than the burst limit plus the pool's budget. */
const MIN_AGENTS = DEFAULT_CONVERGENCE_MAX_FAILURES + 2;
const MAX_AGENTS = DEFAULT_CONVERGENCE_MAX_FAILURES + 5;

function int(prng: Prng, lo: number, hi: number): number {
  return lo + Math.floor(prng.next() * (hi - lo + 1));
}

/** The disruption budget every campaign of `s` has, or undefined when they differ or none. */
export function scenarioBudget(s: FleetScenario): number | undefined {
  const budgets = new Set(s.campaigns.map((c) => c.spec.disruptionBudgetPercent));
  return budgets.size === 1 ? [...budgets][0] : undefined;
}

/** `s` with, sometimes, a burst of failing agents (see the file's TSDoc). */
export function withConvergenceBurst(s: FleetScenario): FleetScenario {
  const prng = createPrng(deriveSeed(s.seed, 31));
  if (s.rollout.kind !== "desired" || (s.yanks?.length ?? 0) > 0) return s;
  const budget = scenarioBudget(s);
  if (budget === undefined || budget > MAX_BUDGET_PERCENT || prng.next() >= SHARE) return s;
  const first = Math.min(...s.campaigns.map((c) => c.at));
  const onlineAt = first + int(prng, 0, 3) * MIN;
  const count = int(prng, MIN_AGENTS, MAX_AGENTS);
  const burst: AgentScript[] = [];
  for (let i = 0; i < count; i++) {
    burst.push({
      id: `node-${String(s.agents.length + i).padStart(3, "0")}`,
      pool: BURST_GROUP,
      labels: { group: BURST_GROUP },
      behaviour: prng.next() < 0.5 ? "refuse" : "fail",
      rollback: "reinstate",
      stepMs: int(prng, 50, 2000),
      restartMs: int(prng, 500, 15_000),
      configCapable: prng.next() < 0.5,
      onlineAt,
    });
  }
  const settleUntil = Math.max(s.rollout.settleUntil, onlineAt + BURST_SET_AFTER_MS + 15 * MIN);
  return { ...s, agents: [...s.agents, ...burst], rollout: { ...s.rollout, settleUntil } };
}
