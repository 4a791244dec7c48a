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
import { NODES_CHANNEL } from "../shared/notify-channels.js";
import { Coalescer } from "./coalescer.js";
import { notifyNodeIds } from "./notify-sql.js";

/** What a node said in its Hello, after validation, plus what Control decided. */
export interface NodeHello {
  readonly nodeId: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly pool: string;
  readonly platform: string;
  readonly agentVersion: string;
  readonly previousVersion: string;
  readonly bootId: string;
  /** The negotiated capabilities. */
  readonly capabilities: readonly string[];
  readonly confirmedSequence: number;
}

/**
 * Why a join token may re-enroll a node that already exists: it names the node (`named`)
 * or allows re-enrollment of any node (`allow_reenroll`).
 */
export type ReenrollGrant = "named" | "allow_reenroll";

/**
 * What let a join token enroll a node that already exists: a grant of the token, an
 * operator's reset, or the enrollment key of the node's own unfinished enrollment (its
 * Welcome was lost before the Agent read its node token).
 */
export type ReenrollVia = ReenrollGrant | "reset" | "enrollment_key";

/** A join-token enrollment for {@link NodeStore.enroll}. */
export interface Enrollment {
  readonly hello: NodeHello;
  readonly sessionId: string;
  readonly joinTokenId: string;
  /** Hex SHA-256 of the new node token's secret. */
  readonly tokenHash: string;
  /** The token's leave to re-enroll an existing node; null: only a reset lets it. */
  readonly grant: ReenrollGrant | null;
  /**
   * Hex SHA-256 of the Hello's enrollment key, or null without one. A node this join token
   * enrolled with the same key, whose node token was never used since, enrolls again.
   */
  readonly enrollmentKeyHash: string | null;
  /** The stream's peer address, for the audit log. */
  readonly peer: string;
  readonly now: Date;
}

/** What {@link NodeStore.enroll} did. */
export type EnrollOutcome =
  | { readonly kind: "created" }
  /** An existing node re-enrolled: by the token's grant, or after an operator reset. */
  | { readonly kind: "reenrolled"; readonly via: ReenrollVia }
  /** The node exists and neither the token nor a reset lets it re-enroll: nothing written. */
  | { readonly kind: "refused" };

/** The columns the agent server needs to authenticate a node token. */
export interface NodeCredentialRow {
  readonly id: string;
  readonly tokenHash: string | null;
  readonly enabled: boolean;
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
 * - `maxInFlight: 4`: both kinds together hold at most 8 of the pool's 10 connections,
 *   leaving room for enrollments, certificate Hellos and the hub's liveness flushes; at low
 *   load 4 lone handshakes still go through at once, each in one round trip.
 * - `maxBatch: 500`: about the default cap of concurrent handshakes (512), so when a batch
 *   ends the next one takes every waiting handshake; it bounds a statement's parameters
 *   (typically a few hundred kilobytes, about 10 MB with every Hello at its label limits)
 *   and how long it holds row locks (milliseconds).
 */
export const DEFAULT_HANDSHAKE_BATCHING: HandshakeBatching = { maxInFlight: 4, maxBatch: 500 };

/** Options of a {@link NodeStore}. */
export interface NodeStoreOptions {
  readonly batching?: HandshakeBatching;
  /** This Control's instance id, written as `held_by` by every Hello (default: none, null). */
  readonly holder?: string;
}

/** A Hello to record, as one call of {@link NodeStore.recordHello}. */
interface HelloWrite {
  readonly hello: NodeHello;
  readonly sessionId: string;
  readonly now: Date;
}

/**
 * Node registry statements over a `pg` pool. {@link NodeStore.credential} and
 * {@link NodeStore.recordHello} are coalesced (see {@link DEFAULT_HANDSHAKE_BATCHING}): a call
 * made while its kind has `maxInFlight` statements executing waits for the next statement,
 * which serves up to `maxBatch` waiting calls at once. Each call resolves as it would alone;
 * a statement that fails for another reason than a value PostgreSQL refuses (connection
 * lost, server down) rejects every call it served.
 */
export class NodeStore {
  private readonly credentials: Coalescer<string, NodeCredentialRow | undefined>;
  private readonly hellos: Coalescer<HelloWrite, HelloOutcome>;
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
  }

  /** The credential columns of a node, or undefined when it never enrolled. */
  async credential(nodeId: string): Promise<NodeCredentialRow | undefined> {
    // PostgreSQL text cannot hold U+0000 (a node token names its node in base64url, so a
    // forged one can carry it): no node has such an id, and asking would fail the batch.
    if (nodeId.includes("\u0000")) return undefined;
    return this.credentials.run(nodeId);
  }

  /**
   * Enrolls a node with a join token in one statement: creates its row when the id is new.
   * An existing node is re-enrolled (its token rotated, the old node token stops working)
   * only when `grant` says the join token may, or when an operator reset the node; that
   * reset is then used up, and the re-enrollment is written to the audit log in the same
   * statement. Otherwise nothing is written and the outcome is `refused`. Of several
   * enrollments racing for one new id, exactly one creates it; the others meet an
   * existing node.
   */
  async enroll(enrollment: Enrollment): Promise<EnrollOutcome> {
    const { hello, now, joinTokenId, grant } = enrollment;
    // One statement, no shared row touched: enrollments of many nodes commit in parallel.
    // A join token's use count is derived from `nodes.join_token_id` when listed.
    const via = `coalesce($14::text, case when (select was_reset from prior) then 'reset'
      else 'enrollment_key' end)`;
    const result = await this.pool.query<{ created: boolean; via: ReenrollVia }>(
      `with prior as (
         select reset_at is not null as was_reset from nodes where id = $1
       ), enrolled as (
         insert into nodes (id, labels, pool, platform, agent_version, previous_version, boot_id,
            capabilities, confirmed_sequence, first_seen, last_seen, online, token_hash,
            token_issued_at, join_token_id, session_id, created_at, updated_at, held_by,
            enrollment_key_hash)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, true, $11, $10, $12, $13, $10, $10,
            $16::text, $17::text)
         on conflict (id) do update set
            labels = excluded.labels, pool = excluded.pool, platform = excluded.platform,
            agent_version = excluded.agent_version,
            previous_version = excluded.previous_version,
            boot_id = excluded.boot_id, capabilities = excluded.capabilities,
            confirmed_sequence = greatest(nodes.confirmed_sequence, excluded.confirmed_sequence),
            last_seen = excluded.last_seen, online = true, token_hash = excluded.token_hash,
            token_issued_at = excluded.token_issued_at, join_token_id = excluded.join_token_id,
            session_id = excluded.session_id, reset_at = null, version = nodes.version + 1,
            updated_at = excluded.updated_at, held_by = excluded.held_by,
            enrollment_key_hash = excluded.enrollment_key_hash
         where $14::text is not null or nodes.reset_at is not null
            or ($17::text is not null and nodes.enrollment_key_hash = $17::text
                and nodes.join_token_id = $12::text)
         returning id, (xmax = 0) as created
       ), notified as (
         select pg_notify('${NODES_CHANNEL}', id) from enrolled
       ), audited as (
         insert into audit_events (time, actor, actor_ip, action, node_id, message, detail)
         select $10, 'join-token:' || $12::text, $15::text, 'node.reenroll', $1::text,
           'node ' || $1::text || ' re-enrolled with join token ' || $12::text || ' from '
             || $15::text || ' ('
             || case ${via} when 'named' then 'a token for named node ids'
                  when 'allow_reenroll' then 'a token allowing re-enrollment'
                  when 'enrollment_key' then 'the same enrollment key: the Welcome of its '
                    || 'enrollment was lost'
                  else 'after an operator reset' end || ')',
           jsonb_build_object('joinTokenId', $12::text, 'peer', $15::text, 'via', ${via})
         from enrolled where not enrolled.created
       )
       select created, ${via} as via, (select count(*) from notified) as notified from enrolled`,
      [
        ...helloParams(hello),
        now,
        enrollment.tokenHash,
        joinTokenId,
        enrollment.sessionId,
        grant,
        enrollment.peer,
        this.holder,
        enrollment.enrollmentKeyHash,
      ],
    );
    const row = result.rows[0];
    if (!row) return { kind: "refused" };
    return row.created ? { kind: "created" } : { kind: "reenrolled", via: row.via };
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
    }>("select id, token_hash, enabled from nodes where id = any($1::text[])", [
      [...new Set(nodeIds)],
    ]);
    const byId = new Map(
      result.rows.map((r) => [r.id, { id: r.id, tokenHash: r.token_hash, enabled: r.enabled }]),
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

/**
 * A `locked` CTE locking the node rows named in a CTE `v`, in id order, before the
 * statement that joins it updates any of them. Every statement here that updates many node
 * rows locks them this way, so two of them running at once (Hello batches, liveness
 * flushes) never wait on each other in a cycle: no deadlock. Joining `locked` makes it run.
 */
const LOCK_IN_ID_ORDER = `locked as materialized (
  select nodes.id from nodes where nodes.id in (select v.id from v) order by nodes.id
  for update of nodes
)`;

/** How one Hello of a batch fared. */
type HelloOutcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/**
 * The Hello write of {@link NodeStore.recordHello} for many nodes, one row of `v` per node,
 * rows locked in id order first ({@link LOCK_IN_ID_ORDER}); `$14` is the holder. It notifies
 * the ids it changed.
 */
const HELLO_BATCH_SQL = `
  with v as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::text[], $9::bigint[], $10::timestamptz[],
        $11::timestamptz[], $12::text[], $13::integer[])
      as v(id, labels, pool, platform, agent_version, previous_version, boot_id, capabilities,
        confirmed_sequence, first_now, now, session_id, hellos)
  ), ${LOCK_IN_ID_ORDER}
  , changed as (
    update nodes set labels = v.labels::jsonb, pool = v.pool, platform = v.platform,
        agent_version = v.agent_version, previous_version = v.previous_version,
        boot_id = v.boot_id, capabilities = v.capabilities::jsonb,
        confirmed_sequence = greatest(nodes.confirmed_sequence, v.confirmed_sequence),
        first_seen = coalesce(nodes.first_seen, v.first_now), last_seen = v.now, online = true,
        held_by = $14::text, session_id = v.session_id, version = nodes.version + v.hellos,
        updated_at = v.now, enrollment_key_hash = null
    from v join locked on locked.id = v.id
    where nodes.id = v.id
    returning nodes.id
  ) ${notifyNodeIds("changed")}`;

/**
 * The parameters of {@link HELLO_BATCH_SQL}: one row per node (an `update … from` joining
 * a node twice would apply only one of its rows). Several Hellos of a node fold into what
 * recording them in order would leave: the last one's facts, session and time, the highest
 * confirmed sequence, the first one's time as a first sighting, a version bump per Hello.
 * Labels and capabilities travel as JSON text: their arrays are ragged, which a
 * two-dimensional array parameter cannot hold.
 */
function helloBatchParams(writes: readonly HelloWrite[]): unknown[][] {
  const nodes = new Map<string, { first: HelloWrite; last: HelloWrite; top: number; n: number }>();
  for (const write of writes) {
    const seen = nodes.get(write.hello.nodeId);
    if (seen) {
      seen.last = write;
      seen.top = Math.max(seen.top, write.hello.confirmedSequence);
      seen.n += 1;
    } else {
      nodes.set(write.hello.nodeId, {
        first: write,
        last: write,
        top: write.hello.confirmedSequence,
        n: 1,
      });
    }
  }
  const rows = [...nodes.values()].map(({ first, last, top, n }) => [
    ...helloParams({ ...last.hello, confirmedSequence: top }),
    first.now,
    last.now,
    last.sessionId,
    n,
  ]);
  const columns = 13;
  return Array.from({ length: columns }, (_, c) => rows.map((row) => row[c]));
}

/** True for a PostgreSQL data exception (SQLSTATE class 22), caused by a value sent. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("22");
}

function helloParams(hello: NodeHello): unknown[] {
  return [
    hello.nodeId,
    JSON.stringify(hello.labels),
    hello.pool,
    hello.platform,
    hello.agentVersion,
    hello.previousVersion,
    hello.bootId,
    JSON.stringify(hello.capabilities),
    hello.confirmedSequence,
  ];
}
