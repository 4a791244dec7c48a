/**
 * What a registered unit of the simulation is: one feature (windows, gates, deferral, budgets,
 * convergence, …) or one fault (a leader crash, a lost lease, a database outage, an agent that
 * lies, …), with how it varies a seed's scenario and what it schedules in the run. The
 * generator (`generator.ts`) applies every unit of the registry (`unit-registry.ts`) to every
 * seed; each unit draws from a seed stream of its own whether, and how, it takes part, so a seed
 * is a random combination of the registered features and faults, and adding a unit leaves the
 * draws of the others as they were.
 *
 * A unit varies the scenario at one or more stages, applied in this order (registry order within
 * a stage): the drawn agents (`agents`), each campaign's spec (`campaign`), the whole scenario
 * before its fleet-level part is drawn (`scenario`), and the scenario with it (`fleet`). It then
 * schedules on the built world (`schedule`, registry order), and may return a hook the step loop
 * calls after every step (the simulated operator answering what it sees).
 */
import type { CampaignSpecInput } from "../control/campaign/index.js";
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignVariation, Scenario } from "./scenario.js";
import type { SimWorld } from "./sim-world.js";

export type { CampaignVariation };

/**
 * One registered feature or fault. Every stage is optional; each must be a function of the seed
 * and its input alone (a seed replays exactly).
 */
export interface ScenarioUnit {
  /** A short name, unique in the registry (the trace and the docs use it). */
  readonly name: string;
  readonly kind: "feature" | "fault";
  /**
   * The registry generation that added it: seeds pinned by an earlier generation
   * (`test/simulation/long-run-seeds.test.ts`) run with the units up to theirs only, so they
   * replay the scenario they were pinned on.
   */
  readonly since: number;
  /** Varies the seed's drawn agents (before a breach's-edge scenario copies them). */
  readonly agents?: (seed: number, agents: readonly AgentScript[]) => AgentScript[];
  /** Varies the `index`-th campaign's spec (never for a scenario on a breach's edge). */
  readonly campaign?: (seed: number, index: number, spec: CampaignSpecInput) => CampaignVariation;
  /** Varies the scenario before its fleet-level part is drawn (`faults`: the run has faults). */
  readonly scenario?: (s: Scenario, faults: boolean) => Scenario;
  /** Draws the fleet-level part (desired versions, plans): exactly one unit of the registry. */
  readonly rollout?: (s: Scenario) => FleetScenario;
  /** Varies the scenario with its fleet-level part. */
  readonly fleet?: (s: FleetScenario) => FleetScenario;
  /**
   * Schedules the unit's events on `world`; returns the hook to call after every step, if any.
   */
  readonly schedule?: (world: SimWorld) => (() => void) | undefined;
}
