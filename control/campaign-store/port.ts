/**
 * The campaign store port: everything the campaign worker reads and writes, as one small
 * interface with two adapters — PostgreSQL (`sql/`, the product) and memory (`memory/`, for
 * unit tests and the deterministic simulation). Both pass the same contract tests
 * (`test/integration/campaign-store-contract/`), so the simulation drives the real
 * worker against the same semantics the product runs on.
 *
 * Rows use the column names of the tables they stand for (`node_id`, `report_at`, …) so the
 * SQL adapter maps them one-to-one; engine records (`CampaignState`, `CampaignNode`) travel
 * whole.
 */

import type { EncodedOperation } from "../agents/operation-frame.js";
import type {
  CampaignNode,
  CampaignState,
  GateResult,
  GateStatus,
  PoolLoad,
} from "../campaign/index.js";
import type { OfferRelease, ReleaseYank } from "./offer-release.js";
import type { CommandRow, ConfigFailureRow, OperationFactRow } from "./rows.js";

/** A campaign row with its engine record. */
export interface CampaignRow {
  readonly campaign: CampaignState;
  readonly targetVersion: string;
  readonly createdBy: string;
  readonly updatedAt: Date;
  readonly finishedAt: Date | undefined;
  /** Optimistic fencing: a write names the version it read. */
  readonly version: number;
  /**
   * The engine features the campaign uses, as recorded when it was created
   * (`engine-features.ts`); a Control leads it only when it knows each. Absent or empty: none
   * (a campaign of a release that recorded none).
   */
  readonly features?: readonly string[] | undefined;
}

/** What a node's registry row says, for the facts of a node that is not connected here. */
export interface NodeRegistryRow {
  id: string;
  boot_id: string;
  agent_version: string;
  capabilities: string[];
  platform: string;
  /** False once an administrator disabled the node. */
  enabled: boolean;
  /**
   * True once an administrator revoked the node (`node revoke`), until it enrolls again after a
   * reset (absent: false).
   */
  revoked?: boolean;
  /** When the node was last heard from, as recorded (at most a minute behind). */
  last_seen: Date | null;
  /** True while a stream of the node is open on some Control, as recorded (absent: false). */
  online?: boolean;
  /**
   * The instance id of the Control holding the node's stream while `online` (absent or null:
   * none). Every Control sweeps the nodes of Controls that are gone to offline, so an online
   * row held by another instance means the node is connected there.
   */
  held_by?: string | null;
}

/** An audit row to insert with a campaign write. */
export interface AuditRow {
  readonly actor: string;
  readonly actorIp: string;
  readonly action: string;
  /** The campaign, desired version or plan it concerns; absent for a node's own command. */
  readonly campaignId?: string | undefined;
  readonly nodeId?: string | undefined;
  readonly message: string;
  readonly detail?: Record<string, unknown>;
}

/** An outbox row to insert. */
export interface NewOperation {
  readonly id: string;
  readonly campaignId: string;
  readonly nodeId: string;
  readonly kind: string;
  /** The encoded Operation, or null when it could not be built (see `failure`). */
  readonly payload: Uint8Array | null;
  /** Why it can never be delivered; recorded as a send failure fact. */
  readonly failure: string | undefined;
}

/** One decision's writes (the caller fenced the transaction and locked the campaign row). */
export interface DecisionWrite {
  readonly campaignId: string;
  /** The row version read; the write fails unless it is still current. */
  readonly version: number;
  readonly campaign: CampaignState | undefined;
  readonly nodes: readonly CampaignNode[];
  readonly operations: readonly NewOperation[];
  readonly appliedCommands: readonly { id: string; outcome: string }[];
  readonly audits: readonly AuditRow[];
  readonly now: Date;
}

/**
 * True when a decision changes anything (then its campaign row's version is bumped); a
 * decision that changed nothing writes nothing, audit rows included.
 */
export function writesSomething(w: DecisionWrite): boolean {
  return (
    w.campaign !== undefined ||
    w.nodes.length > 0 ||
    w.operations.length > 0 ||
    w.appliedCommands.length > 0
  );
}

/** A new campaign with its nodes. */
export interface NewCampaign {
  readonly campaign: CampaignState;
  /**
   * The engine features it uses, recorded with it (absent: `campaignFeatures` of its spec, as
   * every campaign this release creates; a test names others to stand for a newer release's).
   */
  readonly features?: readonly string[] | undefined;
  readonly nodes: readonly CampaignNode[];
  readonly createdBy: string;
  readonly createdByIp: string;
  readonly now: Date;
}

/** The latest `ObservedState` of one operation, as the intake writes it. */
export interface ReportWrite {
  readonly id: string;
  readonly nodeId: string;
  readonly phase: string;
  readonly code: string;
  readonly message: string;
  readonly version: string;
  readonly at: Date;
  /** The boot id of the session it arrived on (null when unknown). */
  readonly bootId: string | null;
}

/** A `ConfigStatus { ok: false }` of a node of a live campaign, as the intake writes it. */
export interface ConfigFailureWrite {
  readonly campaignId: string;
  readonly nodeId: string;
  readonly at: Date;
  readonly bootId: string | null;
  readonly message: string;
}

/** Which unacknowledged operations to re-send. */
export interface ResendFilter {
  /** Only these nodes (typically: just reconnected). */
  readonly nodeIds?: readonly string[];
  /** Only rows never sent or last sent before this time. */
  readonly sentBefore?: Date;
  /** When they would be sent: the instant a campaign's maintenance windows are judged at. */
  readonly now: Date;
}

/** An operation to send now. */
export interface Outgoing {
  readonly nodeId: string;
  /** The operation as the outbox stores it. */
  readonly operation: EncodedOperation;
}

/** Thrown when the campaign row changed since it was read. */
export class CampaignVersionConflict extends Error {
  override readonly name = "CampaignVersionConflict";
}

/** Thrown inside a write transaction by a process that no longer holds the lease. */
export class StaleLeaderError extends Error {
  override readonly name = "StaleLeaderError";
}

/** The reads and writes of one transaction: all of its writes commit together or none does. */
export interface CampaignTransaction {
  /**
   * Holds the lease `name` at `epoch` for `holder` until the transaction ends (a takeover
   * waits for it); false when the lease is not held so.
   */
  holdsLease(name: string, holder: string, epoch: number): Promise<boolean>;
  /** One campaign; `lock` keeps other writers of it out until the transaction ends. */
  readCampaign(id: string, lock?: boolean): Promise<CampaignRow | undefined>;
  /** Every node record of a campaign, in canary order. */
  readNodes(campaignId: string): Promise<CampaignNode[]>;
  /** The registry rows of `nodeIds` (unknown ids are left out). */
  readRegistry(nodeIds: readonly string[]): Promise<NodeRegistryRow[]>;
  /** The outbox rows of a campaign (of `nodeIds` only, when given) that carry a report or a send failure. */
  readOperationFacts(campaignId: string, nodeIds?: readonly string[]): Promise<OperationFactRow[]>;
  /** The config failures of a campaign's nodes (`nodeIds` only, when given), in the order written. */
  readConfigFailures(campaignId: string, nodeIds?: readonly string[]): Promise<ConfigFailureRow[]>;
  /** The commands of a campaign not applied yet, oldest first. */
  pendingCommands(campaignId: string): Promise<CommandRow[]>;
  /**
   * The load of each of `pools`: its enabled nodes in the fleet, and its nodes in flight in
   * other unfinished campaigns at `now` (offered, applying, restarting, or verifying within
   * their config grace).
   */
  poolLoads(
    pools: readonly string[],
    excludingCampaignId: string,
    now: number,
  ): Promise<Map<string, PoolLoad>>;
  /**
   * Writes a decision: changed node rows, the campaign row (bumping its version whenever
   * anything changed), outbox rows (insert-or-ignore: ids are deterministic), applied commands
   * and audit rows.
   * @returns whether anything was written.
   * @throws CampaignVersionConflict when the campaign row is no longer at `version`.
   */
  writeDecision(w: DecisionWrite): Promise<boolean>;
  /** Inserts a campaign and its nodes. */
  insertCampaign(input: NewCampaign): Promise<void>;
  /** The latest result of each gate of a campaign's batch (see `recordGateResult`). */
  readGateResults(campaignId: string, batch: number): Promise<GateResult[]>;
  /** The yanks of those of `versions` that were yanked, by version (none: an empty map). */
  readYanks(versions: readonly string[]): Promise<Map<string, ReleaseYank>>;
}

/**
 * A leader lease: whether this process leads, and the fence its writes go through.
 * Acquired when expired or when the holder's session is gone; every takeover bumps `epoch`.
 */
export interface LeaderLease {
  readonly name: string;
  readonly holder: string;
  /** The epoch this process leads at, or undefined while it does not lead. */
  readonly epoch: number | undefined;
  /**
   * Tries to acquire (when not leading) or renew (when leading) once.
   * @returns whether this process leads afterwards.
   */
  tick(): Promise<boolean>;
  /**
   * Inside an open transaction: throws StaleLeaderError (and ends the leadership) unless this
   * process leads at its epoch.
   */
  fence(tx: CampaignTransaction): Promise<void>;
  /** Gives the lease up (expires it now) and ends its session. Idempotent. */
  release(): Promise<void>;
}

/** Receives the notifications of the channels it listens on ({@link CampaignStore.listen}). */
export interface NotificationListener {
  /** Called with the lines of each notification, in the order they were sent. Must not throw. */
  onNotify(channel: string, lines: readonly string[]): void;
  /**
   * Called each time the listener is (re)established, the first time included: notifications
   * sent before it may have been missed, so what they would have said must be read again.
   */
  onGap?(): void;
}

/** Options of {@link CampaignStore.lease}. */
export interface LeaseOptions {
  /** This process's unique id. */
  readonly holder: string;
  /** How long a lease lasts without renewal. */
  readonly ttlMs: number;
  /** Called with the reason when leadership is lost. */
  readonly onLost?: (why: string) => void;
  readonly name?: string;
  /**
   * The engine features this Control knows, recorded with the lease it takes; with them it
   * takes the lease over from a live holder that lacks features an unfinished campaign records
   * and this Control knows (the SQL store; the memory store ignores them). Absent: neither.
   */
  readonly engineFeatures?: readonly string[] | undefined;
}

/** One evaluation of an outside health gate, to store as its latest result. */
export interface GateResultWrite {
  readonly campaignId: string;
  readonly batch: number;
  /** The gate's index in the campaign's spec. */
  readonly gate: number;
  readonly status: GateStatus;
  readonly at: Date;
  readonly value: string;
  readonly message: string;
  /**
   * A stored failing result taken after this time (epoch ms) is kept rather than replaced (a
   * failure stays until a decision acted on it); give the batch's `gatesAcceptedAt` (0 when none).
   */
  readonly keepFailuresAfter?: number | undefined;
}

/** The campaign store; see the file's TSDoc. */
export interface CampaignStore {
  /** Runs `work` in one transaction; rolls it back when `work` throws. */
  transaction<T>(work: (tx: CampaignTransaction) => Promise<T>): Promise<T>;
  /** Ids of the campaigns not finished yet, oldest first. */
  liveCampaignIds(): Promise<string[]>;
  /** The nodes of a campaign that are not in a final state. */
  openNodeIds(campaignId: string): Promise<string[]>;
  /**
   * Writes reports onto their outbox rows (matched on id AND node; in the database's order,
   * each kept report numbered above every one before it, a report behind the stored one along
   * its operation ignored, never by the stamps: `report-order.ts`; the first sets `acked_at`)
   * and config failures of existing
   * campaigns. A CONFIRMED report on a confirm operation raises the node's registry
   * `confirmed_sequence` to its campaign's target sequence (never lowers it), as the Agent's
   * next Hello would. Unknown operations change nothing.
   */
  recordFacts(
    reports: readonly ReportWrite[],
    configFailures: readonly ConfigFailureWrite[],
  ): Promise<void>;
  /**
   * The unacknowledged, deliverable operations worth re-sending at `filter.now`, oldest first,
   * by the one rule of `worthResending` (control/campaign/resend-rules.ts): an upgrade only
   * while the engine would offer it (node offered, applying or restarting, and enabled;
   * campaign running; a window open; target not yanked), so no Agent first receives one after
   * an abort, while paused, outside the windows or once its node is disabled; a confirm unless its release was yanked; a rollback whatever
   * its node's state (a node that returns on the target after its batch rolled back is rolled
   * back then), unless the release it restores was yanked or the node belongs to a campaign
   * created later (an old rollback never undoes a newer upgrade).
   */
  unackedOperations(filter: ResendFilter): Promise<Outgoing[]>;
  /** Stamps operations queued on a stream (`last_sent_at`, `send_count`). */
  markSent(operationIds: readonly string[], at: Date): Promise<void>;
  /** The registered release `version` with its envelope, or undefined. */
  offerRelease(version: string): Promise<OfferRelease | undefined>;
  /** A lease handle for `holder`; nothing happens until its first tick. */
  lease(options: LeaseOptions): LeaderLease;
  /**
   * For each of `nodeIds`, the newest unfinished campaign that includes it; nodes in none are
   * left out. (A Control that does not lead learns here which campaign a config failure of
   * one of its agents belongs to.)
   */
  liveCampaignOfNodes(nodeIds: readonly string[]): Promise<Map<string, string>>;
  /**
   * Sends `lines` on `channel` to every listener of every Control on this database, the sender
   * included, packed into as few notifications as fit PostgreSQL's payload limit. A
   * notification is a hint that rows changed, sent after they were committed; listeners that
   * miss one find the rows on their next read.
   */
  notify(channel: string, lines: readonly string[]): Promise<void>;
  /**
   * Listens on `channels` until the returned function is called (it resolves once stopped).
   * The listener is (re)established in the background and calls `onGap` each time it is.
   */
  listen(channels: readonly string[], listener: NotificationListener): () => Promise<void>;
  /**
   * Stores a gate's result as the latest of its campaign, batch and gate, except over a stored
   * failing result taken after `keepFailuresAfter`. An unreachable result after an unreachable
   * one keeps the first's `unreachableSince`; any other clears it. Unknown campaigns: dropped.
   */
  recordGateResult(w: GateResultWrite): Promise<void>;
}
