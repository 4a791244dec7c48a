/**
 * The live facts of a decision ({@link NodeFacts}): liveness, boot id, version and
 * capabilities from the hub when the node is connected here (from its registry row, as of
 * its latest Hello, when it is not), whether an administrator disabled it, and the persisted
 * reports, config failures and send failures of the campaign.
 *
 * Online is "a stream here, or a stream on another live Control": the registry row says
 * `online` and is held by another instance (every Control sweeps the rows of Controls that are
 * gone to offline, so such a row names a live holder; its operations reach the node through
 * the outbox and that Control's delivery).
 *
 * Offline is not "no stream": a node without one is `offline` only once `offlineAfterMs`
 * passed since this Control became ready or since the node was last seen, whichever is later.
 * Until then it is reconnecting (a restarted Control has no streams yet).
 */

import type { AgentGateway } from "../agents/events.js";
import type {
  ConfigFailure,
  FactsLookup,
  NodeFacts,
  ObservedReport,
  SendFailure,
} from "../campaign/index.js";
import {
  type ConfigFailureRow,
  configFailureOf,
  type NodeRegistryRow,
  type OperationFactRow,
  reportOf,
  sendFailureOf,
} from "../campaign-store/index.js";

/** The gateway the worker needs: the hub's port, plus when a node was last heard from. */
export interface WorkerGateway extends AgentGateway {
  /** Last time (epoch ms) the node was heard from on its live stream here. */
  lastSeenMs?(nodeId: string): number | undefined;
  /**
   * The nodes with a live stream here (delivery's periodic re-send asks for theirs only);
   * without it every unacknowledged operation is read and those of other nodes dropped.
   */
  nodeIds?(): Iterable<string>;
  /** Closes the node's live stream here, if any (its credential was revoked). */
  cutOff?(nodeId: string, message: string): void;
}

/** The persisted facts of one node in one campaign: reports, send failures, config failures. */
export interface StoredFacts {
  readonly reports: ObservedReport[];
  readonly sendFailures: SendFailure[];
  readonly configFailures: ConfigFailure[];
}

/**
 * Groups outbox and config-failure rows into {@link StoredFacts} per node. `failureSeenMs`, when
 * given, is the time a config failure counts from (the leader's, from when it first loaded it:
 * `FailureSightings`); without it, the stamp of the Control that received it.
 */
export function storedFactsOf(
  operations: readonly OperationFactRow[],
  configFailures: readonly ConfigFailureRow[],
  failureSeenMs?: (row: ConfigFailureRow) => number,
): Map<string, StoredFacts> {
  const out = new Map<string, StoredFacts>();
  const of = (nodeId: string): StoredFacts => {
    let facts = out.get(nodeId);
    if (facts === undefined) {
      facts = { reports: [], sendFailures: [], configFailures: [] };
      out.set(nodeId, facts);
    }
    return facts;
  };
  for (const row of operations) {
    const report = reportOf(row);
    if (report) of(row.node_id).reports.push(report);
    const failure = sendFailureOf(row);
    if (failure) of(row.node_id).sendFailures.push(failure);
  }
  for (const row of configFailures) {
    const failure = configFailureOf(row);
    of(row.node_id).configFailures.push(
      failureSeenMs === undefined ? failure : { ...failure, at: failureSeenMs(row) },
    );
  }
  return out;
}

/** What {@link buildFacts} combines. */
export interface FactSources {
  readonly gateway: WorkerGateway;
  /** Registry rows by node id. */
  readonly registry: ReadonlyMap<string, NodeRegistryRow>;
  /** Persisted facts by node id (a node without an entry has none). */
  readonly stored: ReadonlyMap<string, StoredFacts>;
  readonly liveness: Liveness;
  /** This Control's instance id: a registry row held by it is not a stream elsewhere. */
  readonly self: string;
}

/** What decides that a node without a stream here is offline. */
export interface Liveness {
  /** The decision's time (epoch ms). */
  readonly now: number;
  /** When this Control became ready to judge liveness (it took the lead), epoch ms. */
  readonly readyAt: number;
  /** Silence after which a node without a stream is offline (config timeouts.offlineAfterSeconds). */
  readonly offlineAfterMs: number;
  /** When this Control last heard from the node (its stream ended then, if it did), epoch ms. */
  readonly lastHeardMs: (nodeId: string) => number | undefined;
  /**
   * The leader's time from which a node whose registry row says `lastSeen` (epoch ms, stamped by
   * the Control that held its stream) counts as silent (`row-sightings.ts`); without it the
   * row's own time, another Control's clock.
   */
  readonly rowSeenMs?: (nodeId: string, lastSeen: number, now: number) => number;
}

/**
 * True when a node without a stream here has been silent for `offlineAfterMs`, counted from
 * the latest of: this Control becoming ready, when it saw the registry's last-seen time
 * (`Liveness.rowSeenMs`), the last time this Control heard from it.
 */
export function isOffline(
  liveness: Liveness,
  nodeId: string,
  lastSeen: Date | null | undefined,
): boolean {
  const rowSeen =
    lastSeen === null || lastSeen === undefined
      ? Number.NEGATIVE_INFINITY
      : (liveness.rowSeenMs?.(nodeId, lastSeen.getTime(), liveness.now) ?? lastSeen.getTime());
  const since = Math.max(
    liveness.readyAt,
    rowSeen,
    liveness.lastHeardMs(nodeId) ?? Number.NEGATIVE_INFINITY,
  );
  return liveness.now - since >= liveness.offlineAfterMs;
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
 * True when the registry row says the node's stream is open on another Control (online, held
 * by an instance other than `self`).
 */
export function heldElsewhere(row: NodeRegistryRow | undefined, self: string): boolean {
  return (
    row?.online === true &&
    row.held_by !== undefined &&
    row.held_by !== null &&
    row.held_by !== "" &&
    row.held_by !== self
  );
}

/**
 * The facts of any node, built when first asked and kept for the decision (a decision asks only
 * for the nodes it can act on). A node is online while its stream is open on this Control or,
 * by its registry row, on another one; a node never seen (no registry row, not connected) gets
 * facts that say offline, nothing known.
 */
export function buildFacts(s: FactSources): FactsLookup {
  const built = new Map<string, NodeFacts>();
  return {
    get(nodeId) {
      let facts = built.get(nodeId);
      if (facts === undefined) {
        facts = factsOf(s, nodeId);
        built.set(nodeId, facts);
      }
      return facts;
    },
  };
}

function factsOf(s: FactSources, nodeId: string): NodeFacts {
  const live = s.gateway.connected(nodeId);
  const row = s.registry.get(nodeId);
  const stored = s.stored.get(nodeId);
  const elsewhere = live === undefined && heldElsewhere(row, s.self);
  const online = live !== undefined || elsewhere;
  return {
    nodeId,
    online,
    offline: !online && isOffline(s.liveness, nodeId, row?.last_seen),
    disabled: row?.enabled === false,
    revoked: row?.revoked === true,
    bootId: live?.bootId ?? (row?.boot_id || undefined),
    agentVersion: live?.agentVersion ?? (row?.agent_version || undefined),
    platform: live?.platform ?? (row?.platform || undefined),
    capabilities: live?.capabilities ?? row?.capabilities ?? [],
    lastHeartbeatAt: live
      ? s.gateway.lastSeenMs?.(nodeId)
      : elsewhere
        ? row?.last_seen?.getTime()
        : undefined,
    reports: stored?.reports ?? [],
    configFailures: stored?.configFailures ?? [],
    sendFailures: stored?.sendFailures ?? [],
  };
}
