/**
 * The outbox SQL of the campaign store: which unacknowledged operations to re-send, and the
 * stamps of the ones sent.
 */
import {
  type CampaignPhase,
  type MaintenanceWindow,
  OFFER_DELIVERY_PHASES,
  offerDeliverable,
} from "../../campaign/index.js";
import type { Outgoing, ResendFilter } from "../port.js";
import { inList, resendUpgradeSql } from "./node-state-sql.js";
import type { Queryable } from "./reads.js";

/** SQL: release `version` (an expression) is yanked. */
const yankedSql = (version: string) =>
  `exists (select 1 from releases yr where yr.version = ${version} and yr.yanked_at is not null)`;

/**
 * See {@link CampaignStore.unackedOperations}. The statement applies `worthResending`'s
 * conditions that SQL can judge, written from the engine's own lists (`resendUpgradeSql`,
 * {@link OFFER_DELIVERY_PHASES}); the windows, which need the time-zone rules of
 * `windows.ts`, are judged on the rows it returns, by {@link offerDeliverable}.
 */
export async function unackedOperations(db: Queryable, filter: ResendFilter): Promise<Outgoing[]> {
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
  }>(
    `select o.id, o.node_id, o.payload, o.kind, c.phase,
            case when o.kind = 'upgrade' then c.state->'spec'->'windows' end as windows
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
                 and not exists (
                   select 1 from campaign_nodes later
                     join campaigns lc on lc.id = later.campaign_id
                    where later.node_id = o.node_id and lc.created_at > c.created_at)))
        ${where.map((w) => `and ${w}`).join(" ")}
      order by o.created_at, o.id`,
    params,
  );
  const now = filter.now.getTime();
  return result.rows
    .filter((r) => r.kind !== "upgrade" || offerDeliverable(r.phase, r.windows ?? undefined, now))
    .map((r) => ({
      nodeId: r.node_id,
      operation: { id: r.id, bytes: new Uint8Array(r.payload) },
    }));
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
