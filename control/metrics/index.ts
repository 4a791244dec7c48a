/**
 * Control's Prometheus metrics: one {@link ControlMetrics} registry per Control, the hooks
 * the agent server and hub feed ({@link agentMetrics}), the campaign worker's observer
 * ({@link campaignMetrics}) and the gauges read from the database at scrape time
 * ({@link fleetGauges}). Names and meanings: docs/operator-guide.md, "Metrics and alerts".
 */
export { type AgentMetrics, agentMetrics, operationKind, phaseName } from "./agent-metrics.js";
export { aggregateScrapes, type RegistryScrape } from "./aggregate.js";
export { type BuildInfo, buildInfo } from "./build-info.js";
export { campaignMetrics } from "./campaign-metrics.js";
export { type FleetGaugesOptions, fleetGauges } from "./fleet-gauges.js";
export {
  type Aggregation,
  ControlMetrics,
  type CounterHandle,
  type GroupScrape,
  type Labels,
} from "./registry.js";
