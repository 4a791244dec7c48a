/**
 * The join-token read of an enrolling stream, coalesced: in a burst of enrollments (a new
 * fleet, or agents enrolling again) every stream presents the same few join tokens, so the
 * reads waiting at one moment are served by one statement over the `pg` pool instead of an
 * ORM round trip each.
 */
import type pg from "pg";
import { Coalescer } from "./coalescer.js";
import type { JoinTokenScope } from "./join-token-store.js";
import { DEFAULT_HANDSHAKE_BATCHING, type HandshakeBatching } from "./node-store.js";

/** The columns of a join token that decide whether a presented one is valid. */
export interface JoinTokenCheckRow {
  readonly id: string;
  readonly secretHash: string;
  readonly expiresAt: Date;
  readonly revokedAt: Date | null;
  readonly scope: JoinTokenScope;
}

/**
 * Reads join tokens by id for handshakes. Each call sees the row as committed when its
 * statement ran, so a revocation applies to every enrollment that starts after it commits.
 */
export class JoinTokenReader {
  private readonly reads: Coalescer<string, JoinTokenCheckRow | undefined>;

  constructor(
    private readonly pool: pg.Pool,
    batching: HandshakeBatching = DEFAULT_HANDSHAKE_BATCHING,
  ) {
    this.reads = new Coalescer({ ...batching, execute: (ids) => this.readBatch(ids) });
  }

  /** The join token with this id, or undefined when there is none. */
  read(id: string): Promise<JoinTokenCheckRow | undefined> {
    return this.reads.run(id);
  }

  private async readBatch(ids: string[]): Promise<(JoinTokenCheckRow | undefined)[]> {
    const result = await this.pool.query<{
      id: string;
      secret_hash: string;
      expires_at: Date;
      revoked_at: Date | null;
      node_ids: string[];
      allow_reenroll: boolean;
    }>(
      `select id, secret_hash, expires_at, revoked_at, node_ids, allow_reenroll
       from join_tokens where id = any($1::text[])`,
      [[...new Set(ids)]],
    );
    const byId = new Map(
      result.rows.map((r) => [
        r.id,
        {
          id: r.id,
          secretHash: r.secret_hash,
          expiresAt: r.expires_at,
          revokedAt: r.revoked_at,
          scope: { nodeIds: r.node_ids, allowReenroll: r.allow_reenroll },
        },
      ]),
    );
    return ids.map((id) => byId.get(id));
  }
}
