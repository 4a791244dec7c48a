/**
 * The SQL of late rollbacks (control/campaign/late-rollback.ts): the rows of a finished
 * campaign's rollbacks as the engine's rules read them, the pools' slots they hold, and the
 * advisory lock that serializes their admission with every decision's read of the pools.
 */
import type pg from "pg";
import type { LateRollbackCandidate } from "../../campaign/index.js";
import { lateRollbackHoldsSlot } from "../../campaign/index.js";

/** Anything that runs a query (`reads.ts`'s `Queryable`, said again: reads.ts imports this file). */
type Queryable = Pick<pg.Pool, "query">;

/**
 * The advisory lock a late rollback's admission holds, and every decision's read of its pools'
 * load (`CampaignTransaction.poolLoads`) takes: an admission never falls between a decision's
 * read of the load and the write of its offers, and two Controls never admit into one slot.
 */
export const POOL_BUDGET_LOCK_KEY = 7_443_003;

/** Takes {@link POOL_BUDGET_LOCK_KEY} until the transaction of `q` ends. */
export async function lockPoolBudget(q: Queryable): Promise<void> {
  await q.query("select pg_advisory_xact_lock($1)", [POOL_BUDGET_LOCK_KEY]);
}

interface RawLateRow {
  id: string;
  node_id: string;
  pool: string;
  late_sent_at: Date | null;
  report_phase: string | null;
  report_at: Date | null;
  agent_version: string | null;
  previous_version: string | null;
  reconnect_timeout_ms: number;
  budget_percent: number;
}

/** The late-rollback columns of a finished campaign's rollback `o` (its node `cn`, campaign `c`). */
const LATE_COLUMNS = `o.id, o.node_id, cn.pool, o.late_sent_at, o.report_phase, o.report_at,
       r.agent_version, cn.record->>'previousVersion' as previous_version,
       (c.state->'spec'->>'reconnectTimeoutMs')::double precision as reconnect_timeout_ms,
       (c.state->'spec'->>'disruptionBudgetPercent')::double precision as budget_percent`;

const LATE_FROM = `from campaign_operations o
  join campaigns c on c.id = o.campaign_id and c.finished_at is not null
  join campaign_nodes cn on cn.campaign_id = o.campaign_id and cn.node_id = o.node_id
  left join nodes r on r.id = o.node_id`;

function candidateOf(r: RawLateRow): LateRollbackCandidate {
  return {
    operationId: r.id,
    nodeId: r.node_id,
    pool: r.pool,
    deliveredAt: r.late_sent_at?.getTime(),
    reportPhase: r.report_phase ?? undefined,
    reportAt: r.report_at?.getTime(),
    nodeVersion: r.agent_version ?? undefined,
    previousVersion: r.previous_version ?? undefined,
    reconnectTimeoutMs: Number(r.reconnect_timeout_ms),
    budgetPercent: Number(r.budget_percent),
  };
}

/** The finished campaigns' rollbacks among outbox rows `ids`, in the order of `ids`. */
export async function lateRollbacksOf(
  q: Queryable,
  ids: readonly string[],
): Promise<LateRollbackCandidate[]> {
  if (ids.length === 0) return [];
  const result = await q.query<RawLateRow>(
    `select ${LATE_COLUMNS} ${LATE_FROM} where o.id = any($1::text[]) and o.kind = 'rollback'`,
    [ids],
  );
  const byId = new Map(result.rows.map((r) => [r.id, candidateOf(r)]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row === undefined ? [] : [row];
  });
}

/**
 * The late rollbacks holding a slot per pool of `pools` at `now` (epoch ms;
 * `lateRollbackHoldsSlot`). Reads the rows ever delivered late through the partial index of
 * migration 0026 (`late_sent_at is not null`), never the outbox's history.
 */
export async function lateInFlight(
  q: Queryable,
  pools: readonly string[],
  now: number,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (pools.length === 0) return out;
  const result = await q.query<RawLateRow>(
    `select ${LATE_COLUMNS} ${LATE_FROM}
      where o.late_sent_at is not null and o.kind = 'rollback' and cn.pool = any($1::text[])`,
    [pools],
  );
  for (const raw of result.rows) {
    const row = candidateOf(raw);
    if (lateRollbackHoldsSlot(row, now)) out.set(row.pool, (out.get(row.pool) ?? 0) + 1);
  }
  return out;
}

/** Stamps outbox rows `ids` delivered late at `at` (`late_sent_at`). */
export async function markLateSent(q: Queryable, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await q.query("update campaign_operations set late_sent_at = $2 where id = any($1::text[])", [
    ids,
    at,
  ]);
}
