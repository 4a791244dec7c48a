/**
 * Reads of node status that the admin views present beside the engine's records: which nodes
 * an administrator revoked (a plan counts them skipped `node_revoked`) and which are verifying
 * in an unfinished campaign (a desired version counts them apart from converged ones). Plain
 * queries on the registry and campaign tables; nothing here decides anything.
 */
import type { Database } from "../db/database.js";

/** The nodes among `ids` an administrator revoked (`node revoke`), in the order of `ids`. */
export async function revokedNodeIds(db: Database, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const result = await db.pool.query<{ id: string }>(
    "select id from nodes where revoked_at is not null and id = any($1::text[])",
    [ids],
  );
  const revoked = new Set(result.rows.map((r) => r.id));
  return ids.filter((id) => revoked.has(id));
}

/**
 * The ids of the nodes verifying in an unfinished campaign: back on its target, their config
 * grace not over, so not yet confirmed there.
 */
export async function verifyingNodeIds(db: Database): Promise<ReadonlySet<string>> {
  const result = await db.pool.query<{ node_id: string }>(
    `select distinct cn.node_id from campaign_nodes cn join campaigns c on c.id = cn.campaign_id
      where c.finished_at is null and cn.state = 'verifying'`,
  );
  return new Set(result.rows.map((r) => r.node_id));
}
