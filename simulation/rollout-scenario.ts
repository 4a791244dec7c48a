/**
 * The fleet-level part of a seeded scenario: for a share of the scenarios that are not calm,
 * desired versions (some agents enroll long after the campaigns, so they can only reach the
 * target by converging) or a rollout plan (the campaigns are replaced by one plan over pools
 * a, b and c in order, with a wait between groups). It draws from a seed stream of its own,
 * so the rest of the scenario is the same with or without it; calm scenarios (compared by I9)
 * never get one.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import {
  type CampaignSpecInput,
  type DesiredVersion,
  defaultConvergenceSettings,
  desiredIdOf,
  type Target,
} from "../control/campaign/index.js";
import type { AgentScript } from "./agent-script.js";
import type { Scenario } from "./scenario.js";

/** A plan to start during the run. */
export interface ScenarioPlan {
  readonly id: string;
  readonly at: number;
  /** One pool per group, in order. */
  readonly pools: readonly string[];
  readonly waitMs: number;
  readonly template: CampaignSpecInput;
}

/** What the fleet-level rules do in a run. */
export interface RolloutScenario {
  readonly kind: "none" | "desired" | "plan";
  /** How often the leader runs its fleet passes. */
  readonly convergenceIntervalMs: number;
  readonly plan: ScenarioPlan | undefined;
  /** The run goes on at least until then, so late agents can converge. */
  readonly settleUntil: number;
  /**
   * An operator sets the old release (at every agent's confirmed sequence) as the desired
   * version of one pool then, after the campaigns and the late agents: no node that confirmed
   * or runs the newer release may ever be converged back to it.
   */
  readonly backwards: { readonly at: number; readonly pool: string } | undefined;
}

/** A scenario with its fleet-level part. */
export type FleetScenario = Scenario & { readonly rollout: RolloutScenario };

const MIN = 60_000;
const NONE: RolloutScenario = {
  kind: "none",
  convergenceIntervalMs: 30_000,
  plan: undefined,
  settleUntil: 0,
  backwards: undefined,
};

function int(prng: Prng, lo: number, hi: number): number {
  return lo + Math.floor(prng.next() * (hi - lo + 1));
}

function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[Math.floor(prng.next() * items.length)] as T;
}

/** The scenario with its fleet-level part (none for calm scenarios and most others). */
export function withRollout(s: Scenario): FleetScenario {
  const prng = createPrng(deriveSeed(s.seed, 7));
  const roll = prng.next();
  if (s.calm || s.campaigns.length === 0 || roll >= 0.45) return { ...s, rollout: NONE };
  const convergenceIntervalMs = pick(prng, [5000, 30_000, 60_000]);
  if (roll < 0.25) {
    // Desired versions: a share of the agents enroll 10-40 minutes after the last campaign
    // started (after their group's campaign ended, as a rule), on the old version.
    const last = Math.max(...s.campaigns.map((c) => c.at));
    let latest = 0;
    const agents: AgentScript[] = s.agents.map((a) => {
      if (prng.next() >= 0.3) return a;
      const onlineAt = last + int(prng, 10, 40) * MIN;
      latest = Math.max(latest, onlineAt);
      return { ...a, onlineAt };
    });
    return {
      ...s,
      agents,
      rollout: {
        kind: "desired",
        convergenceIntervalMs,
        plan: undefined,
        settleUntil: latest + 15 * MIN,
        backwards:
          prng.next() < 0.4
            ? { at: latest + int(prng, 1, 5) * MIN, pool: pick(prng, agents).pool }
            : undefined,
      },
    };
  }
  // A plan over pools a, b, c in order; its template is the first campaign's settings.
  const pools = ["a", "b", "c"];
  const agents = s.agents.map((a, i) => ({ ...a, pool: pools[i % pools.length] as string }));
  const first = s.campaigns[0]?.spec as CampaignSpecInput;
  const template: CampaignSpecInput = {
    targetVersion: first.targetVersion,
    batches: first.batches,
    failureThresholdPercent: first.failureThresholdPercent,
    concurrency: first.concurrency,
    onBreach: first.onBreach,
    reconnectTimeoutMs: first.reconnectTimeoutMs,
    configGraceMs: first.configGraceMs,
    soakMs: first.soakMs,
    disruptionBudgetPercent: first.disruptionBudgetPercent,
  };
  return {
    ...s,
    agents,
    campaigns: [],
    rollout: {
      kind: "plan",
      convergenceIntervalMs,
      plan: { id: "p1", at: 3000, pools, waitMs: int(prng, 0, 10) * MIN, template },
      settleUntil: 0,
      backwards: undefined,
    },
  };
}

/** The desired version an operator sets in a `backwards` scenario: `target` over one pool. */
export function backwardsDesired(
  b: NonNullable<RolloutScenario["backwards"]>,
  target: Target,
  now: number,
): DesiredVersion {
  const selector = { labels: {}, pools: [b.pool], nodeIds: [] };
  const exclude = { nodeIds: [], tags: {} };
  return {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target,
    setAt: now,
    setBy: "operator",
    settings: defaultConvergenceSettings(5 * MIN, 0),
    haltedAt: undefined,
    haltedReason: undefined,
  };
}
