/**
 * The agent simulator's public surface: start a fleet of simulated Agents speaking the
 * real Agent Control protocol, script their behaviours, observe and assert on them.
 */

export { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF } from "../agent/core/backoff.js";
export type { DurableState, ReportedState } from "../agent/core/durable-state.js";
export { DEFAULT_CAPABILITIES, SimulatedAgent } from "./agent.js";
export {
  type AgentBehaviour,
  assignBehaviours,
  type BehaviourRates,
  DEFAULT_BEHAVIOUR,
  type UpgradeReaction,
} from "./behaviours.js";
export { type Fleet, FleetOptionsError, nodeIdOf, startFleet } from "./fleet.js";
export { type FleetOptions, MAX_AGENTS, validateFleetOptions } from "./fleet-options.js";
export { type FleetStats, fleetStats, formatStatusLine } from "./fleet-stats.js";
