/**
 * The registry rows and desired versions the pure fleet rules (desired versions, convergence,
 * the fleet summary) are tested over: a node of pool `prod` online on 1.0.0 (confirmed and
 * running sequence 1), and a desired version of 2.0.0 (sequence 2) over some pools.
 */
import {
  type DesiredVersion,
  desiredIdOf,
  type FleetNode,
} from "../../../control/campaign/index.js";

/** The target of {@link desiredOver}: 2.0.0 at sequence 2. */
export const T2 = { version: "2.0.0", sequence: 2 };

/** Node `id`: enabled, online and idle on 1.0.0 in pool `prod`, `over` applied. */
export function fleetNode(id: string, over: Partial<FleetNode> = {}): FleetNode {
  return {
    id,
    labels: {},
    pool: "prod",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
    online: true,
    confirmedSequence: 1,
    runningSequence: 1,
    busy: false,
    ...over,
  };
}

/**
 * The desired version {@link T2} over `pools` (its id derived from the selector), set at
 * t=1000 by campaign c1: a minute to reconnect, no config grace, 20 % in flight, 3 failures
 * halt it; `over` applied.
 */
export function desiredOver(pools: string[], over: Partial<DesiredVersion> = {}): DesiredVersion {
  const selector = { labels: {}, pools, nodeIds: [] };
  const exclude = { nodeIds: [], tags: {} };
  return {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: T2,
    setAt: 1000,
    setBy: "campaign:c1",
    settings: {
      reconnectTimeoutMs: 60_000,
      configGraceMs: 0,
      disruptionBudgetPercent: 20,
      maxFailures: 3,
    },
    haltedAt: undefined,
    haltedReason: undefined,
    ...over,
  };
}
