/**
 * The outbox SQL of the campaign store: which unacknowledged operations to re-send, and the
 * stamps of the ones sent.
 */
import type pg from "pg";
import {
  admitLateRollbacks,
  type CampaignPhase,
  type MaintenanceWindow,
  OFFER_DELIVERY_PHASES,
  type PoolHeld,
  upgradeHeldBack,
} from "../../campaign/index.js";
import type { Outgoing, ResendFilter } from "../port.js";
import { lateRollbacksOf, lockPoolBudget, markLateSent } from "./late-rollbacks.js";
import { inList, resendUpgradeSql } from "./node-state-sql.js";
import { inTransaction, poolLoads, type Queryable } from "./reads.js";

/** SQL: release `version` (an expression) is yanked. */
const yankedSql = (version: string) =>
  `exists (select 1 from releases yr where yr.version = ${version} and yr.yanked_at is not null)`;

/**
 * See {@link CampaignStore.unackedOperations}. The statement applies `worthResending`'s
 * conditions that SQL can judge, written from the engine's own lists (`resendUpgradeSql`,
 * {@link OFFER_DELIVERY_PHASES}); an upgrade's row is then judged by {@link upgradeHeldBack}
 * itself (its windows, which need the time-zone rules of `windows.ts`, and whether its node's
 * registry row says disabled), as the memory adapter judges it. A finished
 * campaign's rollback (a late rollback) is listed only for the nodes named, once its node's
 * registry row is on the campaign's target, and only when {@link admitLate} admits it.
 */
export async function unackedOperations(db: pg.Pool, filter: ResendFilter): Promise<Outgoing[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (filter.nodeIds !== undefined) {
    if (filter.nodeIds.length === 0) return [];
    params.push(filter.nodeIds);
    where.push(`o.node_id = any($${params.length}::text[])`);
  }
  if (filter.sentBefore !== undefined) {
    params.push(filter.sentBefore);
    where.push(`(o.last_sent_at is null or o.last_sent_at < $${params.length})`);
  }
  const result = await db.query<{
    id: string;
    node_id: string;
    payload: Buffer;
    kind: string;
    phase: CampaignPhase;
    windows: MaintenanceWindow[] | null;
    disabled: boolean;
    late: boolean;
  }>(
    `select o.id, o.node_id, o.payload, o.kind, c.phase,
            case when o.kind = 'upgrade' then c.state->'spec'->'windows' end as windows,
            (o.kind = 'upgrade' and exists (
              select 1 from nodes d where d.id = o.node_id and not d.enabled)) as disabled,
            (o.kind = 'rollback' and c.finished_at is not null) as late
       from campaign_operations o
       join campaign_nodes cn on cn.campaign_id = o.campaign_id and cn.node_id = o.node_id
       join campaigns c on c.id = o.campaign_id
      where o.acked_at is null and o.failed_at is null and o.payload is not null
        and ((o.kind = 'confirm' and not ${yankedSql("c.target_version")})
             or (o.kind = 'upgrade' and ${resendUpgradeSql("cn.state")}
                 and ${inList("c.phase", OFFER_DELIVERY_PHASES)}
                 and not ${yankedSql("c.target_version")})
             or (o.kind = 'rollback'
                 and not ${yankedSql("cn.record->>'previousVersion'")}
                 and (c.finished_at is null
                      or ${filter.nodeIds === undefined ? "false" : "true"} and exists (
                        select 1 from nodes r
                         where r.id = o.node_id and r.agent_version = c.target_version))
                 and not exists (
                   select 1 from campaign_nodes later
                     join campaigns lc on lc.id = later.campaign_id
                    where later.node_id = o.node_id and lc.created_at > c.created_at)))
        ${where.map((w) => `and ${w}`).join(" ")}
      order by o.created_at, o.id`,
    params,
  );
  const now = filter.now.getTime();
  const rows = result.rows.filter(
    (r) =>
      r.kind !== "upgrade" ||
      upgradeHeldBack(
        {
          phase: r.phase,
          windows: r.windows ?? undefined,
          targetYanked: false, // the statement lists no upgrade of a yanked target
          nodeDisabled: r.disabled,
        },
        now,
      ) === undefined,
  );
  const late = rows.filter((r) => r.late).map((r) => r.id);
  const admitted = late.length === 0 ? new Set<string>() : await admitLate(db, late, filter.now);
  return rows
    .filter((r) => !r.late || admitted.has(r.id))
    .map((r) => ({
      nodeId: r.node_id,
      operation: { id: r.id, bytes: new Uint8Array(r.payload) },
    }));
}

/**
 * Admits the late rollbacks among outbox rows `ids` at `at` (`admitLateRollbacks`, each pool's
 * slots counted as `poolLoads` counts them, every unfinished campaign's and every late
 * rollback's) and stamps each one that takes a new slot admitted then (`late_sent_at`), in one transaction
 * under the pool-budget lock (`lockPoolBudget`), so an admission never falls between a
 * decision's read of its pools and the write of its offers.
 * @returns the ids to deliver now.
 */
async function admitLate(
  pool: pg.Pool,
  ids: readonly string[],
  at: Date,
): Promise<ReadonlySet<string>> {
  const now = at.getTime();
  return inTransaction(pool, async (client) => {
    await lockPoolBudget(client);
    const candidates = await lateRollbacksOf(client, ids);
    const pools = [...new Set(candidates.map((c) => c.pool))];
    const held = new Map<string, PoolHeld>();
    for (const [p, load] of await poolLoads(client, pools, "", now))
      held.set(p, { size: load.size, held: load.inFlightElsewhere });
    const { deliver, admitted } = admitLateRollbacks(candidates, held, now);
    await markLateSent(client, [...admitted], at);
    return deliver;
  });
}

/** See {@link CampaignStore.markSent}. */
export async function markSent(db: Queryable, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update campaign_operations set last_sent_at = $2, send_count = send_count + 1
      where id = any($1::text[])`,
    [ids, at],
  );
}
