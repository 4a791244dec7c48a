/**
 * What a decision knows of each node besides its record: the facts the shell gathers (its
 * stream, registry row, reports, config and send failures) and the load of its pool, as
 * plain readonly data (times are epoch milliseconds).
 */
/** Operation phases an Agent reports in `ObservedState` (proto `OperationPhase`). */
export type ObservedPhase =
  | "ACCEPTED"
  | "REFUSED"
  | "DOWNLOADING"
  | "VERIFYING"
  | "APPLYING"
  | "RESTARTING"
  | "FAILED"
  | "REINSTATED"
  | "CONFIRMED"
  /** Not now: the node is busy and asks to be offered again later (nothing applied). */
  | "DEFERRED";

/** The latest `ObservedState` an Agent sent for one operation. */
export interface ObservedReport {
  readonly operationId: string;
  readonly phase: ObservedPhase;
  readonly version: string;
  readonly code: string;
  readonly message: string;
  /**
   * When the Control holding the node's stream received it, on THAT Control's clock: shown to
   * people, never compared with a time of another Control (the leader's offers and deadlines).
   */
  readonly at: number;
  /** The boot id of the session it arrived on (undefined when unknown). */
  readonly bootId: string | undefined;
  /**
   * Where the database put this report in its one order of reports (a sequence it assigns at
   * each write, whichever Control wrote it): a report of the same operation with a higher seq
   * was written after it. Two reads of the same stored report give the same seq. Undefined when
   * written by a release that does not number reports (see `docs/decisions.md`, "One clock").
   */
  readonly seq?: number | undefined;
}

/** A `ConfigStatus { ok: false }` received from the node. */
export interface ConfigFailure {
  readonly at: number;
  /** The boot id of the session it arrived on. */
  readonly bootId: string | undefined;
  readonly message: string;
}

/** An operation the worker could not deliver and gave up on. */
export interface SendFailure {
  readonly operationId: string;
  readonly at: number;
  readonly message: string;
}

/**
 * What the worker knows live about one node. `bootId`, `agentVersion` and `capabilities` are
 * those of its latest Hello (kept while it is offline); reports, config failures and send
 * failures are those concerning this campaign (at least since the node was offered).
 * A node without facts (never seen) is treated as offline with nothing known.
 *
 * Liveness has three values, from `online` and `offline` (never both true):
 * - online: it has a welcomed stream on this Control; it can be offered now (with a boot id);
 * - offline: see {@link NodeFacts.offline}; a waiting node may be skipped `node_offline`;
 * - neither (reconnecting): no stream here yet, but not away long enough to be offline (e.g.
 *   just after this Control restarted). It cannot be offered now and is never skipped as
 *   offline: the batch waits for it.
 */
export interface NodeFacts {
  readonly nodeId: string;
  /** It has a welcomed stream on this Control now (an offer can be sent to it). */
  readonly online: boolean;
  /**
   * True only when the node has had no stream for the Control's `offlineAfter`, counted from
   * when this Control became ready or from when the node was last seen (stream closed or last
   * heartbeat), whichever is later. False whenever `online` is true. A node that is neither
   * online nor offline is reconnecting: it cannot be offered now, and it is never skipped as
   * offline.
   */
  readonly offline: boolean;
  /**
   * The node's registry row says it is disabled (an administrator disabled it), as read for
   * this decision. A disabled waiting node is never offered: it is skipped `node_disabled` when
   * its batch looks at it or its offering reaches it. A node already offered (in flight) is
   * left to finish. False when the row says enabled.
   */
  readonly disabled: boolean;
  /**
   * The node's registry row says an administrator revoked it (`agentctl node revoke`): its
   * stream was cut and it cannot connect again before `node reset`. A node in flight is then
   * skipped `node_revoked`, not counted against the release (`judge-node.ts`). Absent: false.
   */
  readonly revoked?: boolean | undefined;
  readonly bootId: string | undefined;
  readonly agentVersion: string | undefined;
  /** Its platform as its latest Hello said (`linux-amd64`); absent or "": not known. */
  readonly platform?: string | undefined;
  /** The negotiated set (Welcome), e.g. "upgrade.v1", "config.v1". */
  readonly capabilities: readonly string[];
  readonly lastHeartbeatAt: number | undefined;
  /** The latest report per operation id of this campaign. */
  readonly reports: readonly ObservedReport[];
  readonly configFailures: readonly ConfigFailure[];
  readonly sendFailures: readonly SendFailure[];
}

/**
 * The load of one pool across the whole fleet, for the disruption budget (SPEC §8 I5: in-flight
 * nodes per pool never exceed the pool's budget across all campaigns). A pool is a node's
 * `pool` value; "" (no pool) is one pool of its own.
 */
export interface PoolLoad {
  /**
   * The pool's enabled nodes in the whole fleet (registry rows with this pool that are not
   * disabled), whether or not they belong to a campaign. The pool's budget is
   * `poolLimit(size, disruptionBudgetPercent)` of the deciding campaign.
   */
  readonly size: number;
  /**
   * Nodes of this pool in flight in the OTHER live campaigns (finishedAt null, not the one being
   * decided), as the worker counts them from their stored node rows at this decision: rows for
   * which `inFlight(row, now)` is true (offered, applying, restarting, rolling back, verifying
   * with `graceEndsAt` unset or after `now`, or final with a rollback pending). When it is at
   * or above the budget, this campaign offers nothing in that pool.
   */
  readonly inFlightElsewhere: number;
}
