/**
 * The live facts of a decision ({@link NodeFacts}): liveness, boot id, version and
 * capabilities from the hub when the node is connected here (from its registry row, as of
 * its latest Hello, when it is not), and the persisted reports, config failures and send
 * failures of the campaign.
 */

import type { AgentGateway } from "../agents/events.js";
import type { ConfigFailure, NodeFacts, ObservedReport, SendFailure } from "../campaign/index.js";
import {
  type ConfigFailureRow,
  configFailureOf,
  type OperationFactRow,
  reportOf,
  sendFailureOf,
} from "./rows.js";
import type { NodeRegistryRow } from "./store.js";

/** The gateway the worker needs: the hub's port, plus when a node was last heard from. */
export interface WorkerGateway extends AgentGateway {
  /** Last time (epoch ms) the node was heard from on its live stream here. */
  lastSeenMs?(nodeId: string): number | undefined;
}

/** What {@link buildFacts} combines. */
export interface FactSources {
  readonly nodeIds: readonly string[];
  readonly gateway: WorkerGateway;
  readonly registry: readonly NodeRegistryRow[];
  readonly operations: readonly OperationFactRow[];
  readonly configFailures: readonly ConfigFailureRow[];
}

/** A node's platform: its live session's, else its registry row's. */
export function platformOf(
  nodeId: string,
  gateway: AgentGateway,
  registry: ReadonlyMap<string, NodeRegistryRow>,
): string | undefined {
  return gateway.connected(nodeId)?.platform ?? (registry.get(nodeId)?.platform || undefined);
}

/**
 * Facts for `nodeIds`. A node is online only while its stream is open on this Control; a
 * node never seen (no registry row, not connected) gets facts that say offline, nothing known.
 */
export function buildFacts(s: FactSources): Map<string, NodeFacts> {
  const registry = new Map(s.registry.map((r) => [r.id, r]));
  const reports = new Map<string, ObservedReport[]>();
  const sendFailures = new Map<string, SendFailure[]>();
  for (const row of s.operations) {
    const report = reportOf(row);
    if (report) push(reports, row.node_id, report);
    const failure = sendFailureOf(row);
    if (failure) push(sendFailures, row.node_id, failure);
  }
  const configFailures = new Map<string, ConfigFailure[]>();
  for (const row of s.configFailures) push(configFailures, row.node_id, configFailureOf(row));
  const facts = new Map<string, NodeFacts>();
  for (const nodeId of s.nodeIds) {
    const live = s.gateway.connected(nodeId);
    const row = registry.get(nodeId);
    facts.set(nodeId, {
      nodeId,
      online: live !== undefined,
      bootId: live?.bootId ?? (row?.boot_id || undefined),
      agentVersion: live?.agentVersion ?? (row?.agent_version || undefined),
      capabilities: live?.capabilities ?? row?.capabilities ?? [],
      lastHeartbeatAt: live ? s.gateway.lastSeenMs?.(nodeId) : undefined,
      reports: reports.get(nodeId) ?? [],
      configFailures: configFailures.get(nodeId) ?? [],
      sendFailures: sendFailures.get(nodeId) ?? [],
    });
  }
  return facts;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
