/**
 * Writes and reads of the node registry on the agent hot paths, as single SQL statements
 * (no identity map): handshake reads and writes coalesced into batches under load, and
 * liveness flushed in batches with `unnest`, never one write per heartbeat.
 *
 * Several Controls may serve one database: a Hello write records which one holds the node's
 * stream (`held_by`, with `online`), a stream end clears both, and each of these statements
 * notifies the ids it changed on the nodes channel (`notify-sql.ts`), so the leading Control
 * re-reads those rows at once.
 */
import type pg from "pg";
import { Coalescer } from "./coalescer.js";
import {
  type Enrollment,
  type EnrollOutcome,
  type EnrollResult,
  enrollBatch,
} from "./node-enrollment.js";
import type { NodeHello } from "./node-hello.js";
import {
  HELLO_BATCH_SQL,
  type HelloWrite,
  helloBatchParams,
  isDataError,
  LOCK_IN_ID_ORDER,
} from "./node-statements.js";
import { notifyNodeIds } from "./notify-sql.js";

export type {
  Enrollment,
  EnrollOutcome,
  ReenrollGrant,
  ReenrollVia,
  TokenRefusal,
} from "./node-enrollment.js";
export type { NodeHello } from "./node-hello.js";

/** The columns the agent server needs to authenticate a node token. */
export interface NodeCredentialRow {
  readonly id: string;
  readonly tokenHash: string | null;
  readonly enabled: boolean;
  /** Waiting for an administrator's approval (`enrollment.requireApproval`). */
  readonly pending: boolean;
}

/** A node heard from, for a batched flush of `last_seen`. */
export interface Sighting {
  readonly nodeId: string;
  readonly lastSeen: Date;
}

/** A stream that ended, for a batched flush of `online = false`. */
export interface StreamEnd {
  readonly nodeId: string;
  readonly sessionId: string;
  readonly lastSeen: Date;
}

/** How the handshake statements of a {@link NodeStore} are batched. */
export interface HandshakeBatching {
  /** Statements of one kind (credential reads, Hello writes) executing at once. */
  readonly maxInFlight: number;
  /** Handshakes served by one statement at most. */
  readonly maxBatch: number;
}

/**
 * The default {@link HandshakeBatching}. Every handshake costs a credential read and a Hello
 * write; in a reconnect storm (a fleet coming back after a Control restart, or an upgrade
 * campaign restarting thousands of agents) one row per round trip would make the pool the
 * bottleneck, so each kind is coalesced:
 * - `maxInFlight: 4`: both kinds together hold at most 8 of the raw pool's 20 connections
 *   (`RAW_POOL_SIZE`, database.ts), leaving room for enrollments ({@link ENROLLMENTS_IN_FLIGHT}),
 *   certificate Hellos, the campaign worker and the hub's liveness flushes; at low
 *   load 4 lone handshakes still go through at once, each in one round trip.
 * - `maxBatch: 500`: about the default cap of concurrent handshakes (512), so when a batch
 *   ends the next one takes every waiting handshake; it bounds a statement's parameters
 *   (typically a few hundred kilobytes, about 10 MB with every Hello at its label limits)
 *   and how long it holds row locks (milliseconds).
 */
export const DEFAULT_HANDSHAKE_BATCHING: HandshakeBatching = { maxInFlight: 4, maxBatch: 500 };

/**
 * Enrollment statements executing at once (never more than the batching's `maxInFlight`),
 * each serving up to `maxBatch` enrollments. Bursts
 * of enrollments (a fleet being provisioned) and of reconnects rarely coincide, so with the
 * credential reads and Hello writes they still leave half of the raw pool's connections
 * (`RAW_POOL_SIZE`, database.ts) to the campaign worker and the liveness flushes.
 */
export const ENROLLMENTS_IN_FLIGHT = 2;

/** Options of a {@link NodeStore}. */
export interface NodeStoreOptions {
  readonly batching?: HandshakeBatching;
  /** This Control's instance id, written as `held_by` by every Hello (default: none, null). */
  readonly holder?: string;
  /** New nodes enroll `pending` until an administrator approves them (default false). */
  readonly requireApproval?: boolean;
}

/**
 * Node registry statements over a `pg` pool. {@link NodeStore.credential},
 * {@link NodeStore.recordHello} and {@link NodeStore.enroll} are coalesced (see {@link DEFAULT_HANDSHAKE_BATCHING}): a call
 * made while its kind has `maxInFlight` statements executing waits for the next statement,
 * which serves up to `maxBatch` waiting calls at once. Each call resolves as it would alone;
 * a statement that fails for another reason than a value PostgreSQL refuses (connection
 * lost, server down) rejects every call it served.
 */
export class NodeStore {
  private readonly credentials: Coalescer<string, NodeCredentialRow | undefined>;
  private readonly hellos: Coalescer<HelloWrite, HelloOutcome>;
  private readonly enrollments: Coalescer<Enrollment, EnrollResult>;
  private readonly holder: string | null;

  constructor(
    private readonly pool: pg.Pool,
    options: NodeStoreOptions = {},
  ) {
    this.holder = options.holder ?? null;
    const batching = options.batching ?? DEFAULT_HANDSHAKE_BATCHING;
    this.credentials = new Coalescer({
      ...batching,
      execute: (nodeIds) => this.credentialBatch(nodeIds),
    });
    this.hellos = new Coalescer({ ...batching, execute: (writes) => this.helloBatch(writes) });
    this.enrollments = new Coalescer({
      maxInFlight: Math.min(ENROLLMENTS_IN_FLIGHT, batching.maxInFlight),
      maxBatch: batching.maxBatch,
      execute: (enrollments) =>
        enrollBatch(
          this.pool,
          { holder: this.holder, requireApproval: options.requireApproval ?? false },
          enrollments,
        ),
    });
  }

  /** The credential columns of a node, or undefined when it never enrolled. */
  async credential(nodeId: string): Promise<NodeCredentialRow | undefined> {
    // PostgreSQL text cannot hold U+0000 (a node token names its node in base64url, so a
    // forged one can carry it): no node has such an id, and asking would fail the batch.
    if (nodeId.includes("\u0000")) return undefined;
    return this.credentials.run(nodeId);
  }

  /**
   * Enrolls a node with a join token, in a statement shared with the other enrollments
   * waiting then (node-enrollment.ts): creates its row when the id is new.
   * An existing node is re-enrolled (its token rotated, the old node token stops working)
   * only when `grant` says the join token may, when an operator reset the node (the reset
   * is then used up), or when the same join token and enrollment key enrolled it and its
   * node token was never used since (a lost Welcome); the re-enrollment is written to the
   * audit log in the same statement. Otherwise nothing is written and the outcome is
   * `refused`. Of several enrollments racing for one new id, exactly one creates it; the
   * others meet an existing node.
   * @throws the database's error when the statement fails (for a data error, only for the
   * enrollment whose values caused it).
   */
  async enroll(enrollment: Enrollment): Promise<EnrollOutcome> {
    const result = await this.enrollments.run(enrollment);
    if (!result.ok) throw result.error;
    return result.outcome;
  }

  /**
   * Records a Hello on a node token: what the node runs now, and that it is online. Does
   * nothing when the node has no row. Hellos of one node recorded in one statement leave the
   * row as recording them one by one, in call order, would.
   */
  async recordHello(hello: NodeHello, sessionId: string, now: Date): Promise<void> {
    const outcome = await this.hellos.run({ hello, sessionId, now });
    if (!outcome.ok) throw outcome.error;
  }

  /** Writes `last_seen` of many nodes in one statement (rows locked in id order). */
  async flushSightings(entries: readonly Sighting[]): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `with v as (select * from unnest($1::text[], $2::timestamptz[]) as v(id, last_seen)),
       ${LOCK_IN_ID_ORDER}
       update nodes set last_seen = greatest(nodes.last_seen, v.last_seen)
       from v join locked on locked.id = v.id
       where nodes.id = v.id`,
      [entries.map((e) => e.nodeId), entries.map((e) => e.lastSeen)],
    );
  }

  /**
   * Marks nodes offline (held by no Control) whose ended stream is still the one on record: a
   * node that already reconnected (a newer session id, here or on another Control) stays
   * online, whatever order the writes land. One statement, rows locked in id order; it
   * notifies the ids it changed.
   */
  async flushStreamEnds(entries: readonly StreamEnd[]): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `with v as (
         select * from unnest($1::text[], $2::text[], $3::timestamptz[])
           as v(id, session_id, last_seen)
       ), ${LOCK_IN_ID_ORDER}, changed as (
         update nodes set online = false, held_by = null,
           last_seen = greatest(nodes.last_seen, v.last_seen)
         from v join locked on locked.id = v.id
         where nodes.id = v.id and nodes.session_id = v.session_id
         returning nodes.id
       ) ${notifyNodeIds("changed")}`,
      [
        entries.map((e) => e.nodeId),
        entries.map((e) => e.sessionId),
        entries.map((e) => e.lastSeen),
      ],
    );
  }

  private async credentialBatch(nodeIds: string[]): Promise<(NodeCredentialRow | undefined)[]> {
    const result = await this.pool.query<{
      id: string;
      token_hash: string | null;
      enabled: boolean;
      pending: boolean;
    }>("select id, token_hash, enabled, pending from nodes where id = any($1::text[])", [
      [...new Set(nodeIds)],
    ]);
    const byId = new Map(
      result.rows.map((r) => [
        r.id,
        { id: r.id, tokenHash: r.token_hash, enabled: r.enabled, pending: r.pending },
      ]),
    );
    return nodeIds.map((id) => byId.get(id));
  }

  /**
   * Writes a batch of Hellos in one statement. A data error (SQLSTATE class 22: a value
   * PostgreSQL cannot store) fails only the Hellos that cause it: the batch is split in
   * halves until they are found, so one bad Hello cannot fail the handshakes it shares a
   * batch with.
   */
  private async helloBatch(writes: HelloWrite[]): Promise<HelloOutcome[]> {
    try {
      await this.pool.query(HELLO_BATCH_SQL, [...helloBatchParams(writes), this.holder]);
      return writes.map(() => ({ ok: true }));
    } catch (error) {
      if (!isDataError(error)) throw error;
      if (writes.length === 1) return [{ ok: false, error }];
      const half = Math.ceil(writes.length / 2);
      const first = await this.helloBatch(writes.slice(0, half));
      const second = await this.helloBatch(writes.slice(half));
      return [...first, ...second];
    }
  }
}

/** How one Hello of a batch fared. */
type HelloOutcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };
