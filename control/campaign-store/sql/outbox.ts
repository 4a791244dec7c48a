/**
 * The outbox SQL of the campaign store: which unacknowledged operations to re-send, and the
 * stamps of the ones sent.
 */
import type { Outgoing, ResendFilter } from "../port.js";
import { resendUpgradeSql } from "./node-state-sql.js";
import type { Queryable } from "./reads.js";

/** See {@link CampaignStore.unackedOperations}. */
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
  const result = await db.query<{ id: string; node_id: string; payload: Buffer }>(
    `select o.id, o.node_id, o.payload from campaign_operations o
       join campaign_nodes cn on cn.campaign_id = o.campaign_id and cn.node_id = o.node_id
      where o.acked_at is null and o.failed_at is null and o.payload is not null
        and (o.kind = 'confirm'
             or (o.kind = 'upgrade' and ${resendUpgradeSql("cn.state")}
                 and not exists (
                   select 1 from campaigns yc join releases yr on yr.version = yc.target_version
                    where yc.id = o.campaign_id and yr.yanked_at is not null))
             or (o.kind = 'rollback' and not exists (
                   select 1 from campaign_nodes later
                     join campaigns lc on lc.id = later.campaign_id
                     join campaigns oc on oc.id = o.campaign_id
                    where later.node_id = o.node_id and lc.created_at > oc.created_at)))
        ${where.map((w) => `and ${w}`).join(" ")}
      order by o.created_at, o.id`,
    params,
  );
  return result.rows.map((r) => ({
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
