/**
 * The trust state each node's Agent reports (TrustStatus): one statement per report, which
 * changes the row only when the state differs, so an Agent repeating that it is frozen after
 * every Welcome costs a read of its row and no write.
 */
import type pg from "pg";

/** What an Agent reported of its TUF metadata. */
export interface NodeTrust {
  readonly nodeId: string;
  /** Since when it is frozen; null when it is not. */
  readonly frozenSince: Date | null;
  /** Why (empty when not frozen). */
  readonly reason: string;
}

/**
 * Records `trust` on its node's row; true when the row changed. A node without a row (never
 * enrolled) changes nothing. A frozen node's first `since` is kept while it stays frozen.
 */
export async function recordNodeTrust(pool: pg.Pool, trust: NodeTrust): Promise<boolean> {
  const result = await pool.query(
    `update nodes
        set trust_frozen_since = case
              when $2::timestamptz is null then null
              else coalesce(trust_frozen_since, $2::timestamptz) end,
            trust_reason = $3
      where id = $1
        and ((trust_frozen_since is null) <> ($2::timestamptz is null) or trust_reason <> $3)`,
    [trust.nodeId, trust.frozenSince, trust.frozenSince === null ? "" : trust.reason],
  );
  return (result.rowCount ?? 0) > 0;
}
