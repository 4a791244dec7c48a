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

/** How long one trust write may take before it is given up (a one-row update: it is hung). */
export const TRUST_WRITE_TIMEOUT_MS = 10_000;

/** Options of {@link recordNodeTrust}. */
export interface RecordNodeTrustOptions {
  /** Statement timeout, ms (default {@link TRUST_WRITE_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
}

/**
 * Records `trust` on its node's row; true when the row changed. A node without a row (never
 * enrolled) changes nothing. A frozen node's first `since` is kept while it stays frozen.
 * A write still unanswered after its timeout (a lock held elsewhere, a stalled server) is
 * rejected and its connection is dropped from the pool, so a hung statement holds neither
 * the recorder nor the pool's close; the node's next report writes again.
 */
export async function recordNodeTrust(
  pool: pg.Pool,
  trust: NodeTrust,
  options: RecordNodeTrustOptions = {},
): Promise<boolean> {
  // pg-pool releases a client whose query failed (a read timeout too) by destroying it.
  const result = await pool.query({
    query_timeout: options.timeoutMs ?? TRUST_WRITE_TIMEOUT_MS,
    text: `update nodes
        set trust_frozen_since = case
              when $2::timestamptz is null then null
              else coalesce(trust_frozen_since, $2::timestamptz) end,
            trust_reason = $3
      where id = $1
        and ((trust_frozen_since is null) <> ($2::timestamptz is null) or trust_reason <> $3)`,
    values: [trust.nodeId, trust.frozenSince, trust.frozenSince === null ? "" : trust.reason],
  } as pg.QueryConfig);
  return (result.rowCount ?? 0) > 0;
}
