/**
 * Writes and reads of the node registry on the agent hot paths, as single SQL statements
 * (no identity map): one row write per stream start and end, and liveness flushed in
 * batches with `unnest`, never one write per heartbeat.
 */
import type pg from "pg";

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

/** Node registry statements over a `pg` pool. */
export class NodeStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The credential columns of a node, or undefined when it never enrolled. */
  async credential(nodeId: string): Promise<NodeCredentialRow | undefined> {
    const result = await this.pool.query<{
      id: string;
      token_hash: string | null;
      enabled: boolean;
    }>("select id, token_hash, enabled from nodes where id = $1", [nodeId]);
    const row = result.rows[0];
    return row ? { id: row.id, tokenHash: row.token_hash, enabled: row.enabled } : undefined;
  }

  /**
   * Enrolls a node with a join token: creates its row, or rotates the token of an existing
   * node (the old node token stops working).
   */
  async enroll(
    hello: NodeHello,
    sessionId: string,
    joinTokenId: string,
    tokenHash: string,
    now: Date,
  ): Promise<{ created: boolean }> {
    // One statement, no shared row touched: enrollments of many nodes commit in parallel.
    // A join token's use count is derived from `nodes.join_token_id` when listed.
    const result = await this.pool.query<{ created: boolean }>(
      `insert into nodes (id, labels, pool, platform, agent_version, previous_version, boot_id,
          capabilities, confirmed_sequence, first_seen, last_seen, online, token_hash,
          token_issued_at, join_token_id, session_id, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, true, $11, $10, $12, $13, $10, $10)
       on conflict (id) do update set
          labels = excluded.labels, pool = excluded.pool, platform = excluded.platform,
          agent_version = excluded.agent_version, previous_version = excluded.previous_version,
          boot_id = excluded.boot_id, capabilities = excluded.capabilities,
          confirmed_sequence = greatest(nodes.confirmed_sequence, excluded.confirmed_sequence),
          last_seen = excluded.last_seen, online = true, token_hash = excluded.token_hash,
          token_issued_at = excluded.token_issued_at, join_token_id = excluded.join_token_id,
          session_id = excluded.session_id, version = nodes.version + 1,
          updated_at = excluded.updated_at
       returning (xmax = 0) as created`,
      [...helloParams(hello), now, tokenHash, joinTokenId, sessionId],
    );
    return { created: result.rows[0]?.created ?? false };
  }

  /** Records a Hello on a node token: what the node runs now, and that it is online. */
  async recordHello(hello: NodeHello, sessionId: string, now: Date): Promise<void> {
    await this.pool.query(
      `update nodes set labels = $2, pool = $3, platform = $4, agent_version = $5,
          previous_version = $6, boot_id = $7, capabilities = $8,
          confirmed_sequence = greatest(confirmed_sequence, $9), first_seen = coalesce(first_seen, $10),
          last_seen = $10, online = true, session_id = $11, version = version + 1, updated_at = $10
       where id = $1`,
      [...helloParams(hello), now, sessionId],
    );
  }

  /** Writes `last_seen` of many nodes in one statement. */
  async flushSightings(entries: readonly Sighting[]): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `update nodes set last_seen = greatest(nodes.last_seen, v.last_seen)
       from unnest($1::text[], $2::timestamptz[]) as v(id, last_seen)
       where nodes.id = v.id`,
      [entries.map((e) => e.nodeId), entries.map((e) => e.lastSeen)],
    );
  }

  /**
   * Marks nodes offline whose ended stream is still the one on record: a node that
   * already reconnected (a newer session id) stays online, whatever order the writes land.
   */
  async flushStreamEnds(entries: readonly StreamEnd[]): Promise<void> {
    if (entries.length === 0) return;
    await this.pool.query(
      `update nodes set online = false, last_seen = greatest(nodes.last_seen, v.last_seen)
       from unnest($1::text[], $2::text[], $3::timestamptz[]) as v(id, session_id, last_seen)
       where nodes.id = v.id and nodes.session_id = v.session_id`,
      [
        entries.map((e) => e.nodeId),
        entries.map((e) => e.sessionId),
        entries.map((e) => e.lastSeen),
      ],
    );
  }

  /**
   * Marks every node offline except those with a live stream here. Run at start: a node is
   * online only while a stream to this Control is open.
   */
  async markAllOfflineExcept(liveNodeIds: readonly string[]): Promise<number> {
    const result = await this.pool.query(
      "update nodes set online = false where online and not (id = any($1::text[]))",
      [liveNodeIds],
    );
    return result.rowCount ?? 0;
  }
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
