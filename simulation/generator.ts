/**
 * The one scenario generator: a seed's base scenario (`scenario.ts`) varied by every registered
 * feature and fault of a registry generation (`unit-registry.ts`), stage by stage, and the world
 * built on it. Nothing but the seed chooses, so a seed replays exactly.
 */
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";
import { scenarioOf } from "./scenario.js";
import { buildWorld, type SimWorld } from "./sim-world.js";
import { unitsOf } from "./unit-registry.js";
import type { CampaignVariation, ScenarioUnit } from "./units.js";

/** The scenario of `seed` under `units` (default: the newest generation's); faults when `faults`. */
export function generateScenario(
  seed: number,
  faults: boolean,
  units: readonly ScenarioUnit[] = unitsOf(),
): FleetScenario {
  const base = scenarioOf(seed, {
    agents: (agents) =>
      units.reduce<AgentScript[]>((a, u) => (u.agents ? u.agents(seed, a) : a), [...agents]),
    campaign: (index, spec) =>
      units.reduce<CampaignVariation>(
        (v, u) => {
          if (u.campaign === undefined) return v;
          const next = u.campaign(seed, index, v.spec);
          return { spec: next.spec, gateScripts: next.gateScripts ?? v.gateScripts ?? [] };
        },
        { spec },
      ),
  });
  const varied = units.reduce((s, u) => (u.scenario ? u.scenario(s, faults) : s), base);
  const rollouts = units.filter((u) => u.rollout !== undefined);
  const rollout = rollouts[0]?.rollout;
  if (rollouts.length !== 1 || rollout === undefined)
    throw new Error(`the registry must hold one rollout unit, not ${rollouts.length}`);
  return units.reduce((s, u) => (u.fleet ? u.fleet(s) : s), rollout(varied));
}

/** Options of {@link worldOf}. */
export interface WorldOptions {
  readonly faults: boolean;
  readonly fullTrace?: boolean;
  /** The registry generation (default: the newest); pinned seeds name theirs. */
  readonly generation?: number;
}

/** The world of `seed`'s generated scenario; no Control runs yet. */
export function worldOf(seed: number, options: WorldOptions): SimWorld {
  return buildWorld(generateScenario(seed, options.faults, unitsOf(options.generation)), options);
}
