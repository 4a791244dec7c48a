/**
 * Read queries of the admin API over campaigns: pages of campaigns (newest first, filtered by
 * phase and node), pages of a campaign's nodes (canary order, filtered by state), per-state
 * node counts, and a campaign with its counts.
 */
import type { CampaignNode, CampaignPhase, NodeState } from "../../campaign/index.js";
import type { CampaignRow } from "../port.js";
import { nodeFromJson } from "../rows.js";
import { type Queryable, readCampaign, readCampaigns } from "./reads.js";

/** A page request of campaigns. */
export interface CampaignPageQuery {
  readonly phases: readonly CampaignPhase[];
  /** Only campaigns that include this node. */
  readonly nodeId: string | undefined;
  readonly limit: number;
  /** The (created_at, id) of the last campaign of the previous page. */
  readonly after: { readonly createdAt: Date; readonly id: string } | undefined;
}

/** One page of campaigns, newest first; `more` when another page follows. */
export async function campaignPage(
  q: Queryable,
  query: CampaignPageQuery,
): Promise<{ rows: CampaignRow[]; more: boolean }> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (query.phases.length > 0) {
    params.push(query.phases);
    where.push(`c.phase = any($${params.length}::text[])`);
  }
  if (query.nodeId) {
    params.push(query.nodeId);
    where.push(
      `exists (select 1 from campaign_nodes cn where cn.campaign_id = c.id and cn.node_id = $${params.length})`,
    );
  }
  if (query.after) {
    params.push(query.after.createdAt, query.after.id);
    where.push(`(c.created_at, c.id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(query.limit + 1);
  const result = await q.query<{ id: string }>(
    `select c.id from campaigns c ${where.length > 0 ? `where ${where.join(" and ")}` : ""}
      order by c.created_at desc, c.id desc limit $${params.length}`,
    params,
  );
  const ids = result.rows.map((r) => r.id);
  const rows = await readCampaigns(q, ids.slice(0, query.limit));
  const order = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => (order.get(a.campaign.id) ?? 0) - (order.get(b.campaign.id) ?? 0));
  return { rows, more: ids.length > query.limit };
}

/** Node counts per (batch, state) of each campaign. */
export async function nodeStateCounts(
  q: Queryable,
  campaignIds: readonly string[],
): Promise<Map<string, { batch: number; state: NodeState; count: number }[]>> {
  const out = new Map<string, { batch: number; state: NodeState; count: number }[]>();
  if (campaignIds.length === 0) return out;
  const result = await q.query<{ campaign_id: string; batch: number; state: string; n: number }>(
    `select campaign_id, batch, state, count(*)::int as n from campaign_nodes
      where campaign_id = any($1::text[]) group by campaign_id, batch, state`,
    [campaignIds],
  );
  for (const r of result.rows) {
    const list = out.get(r.campaign_id) ?? [];
    list.push({ batch: r.batch, state: r.state as NodeState, count: r.n });
    out.set(r.campaign_id, list);
  }
  return out;
}

/** A campaign row with its per-(batch, state) counts, or undefined. */
export async function campaignWithCounts(
  q: Queryable,
  id: string,
): Promise<
  { row: CampaignRow; counts: { batch: number; state: NodeState; count: number }[] } | undefined
> {
  const row = await readCampaign(q, id);
  if (!row) return undefined;
  const counts = (await nodeStateCounts(q, [id])).get(id) ?? [];
  return { row, counts };
}

/** A page request of one campaign's node rows. */
export interface CampaignNodePageQuery {
  readonly campaignId: string;
  /** Only nodes in one of these states (empty: every state). */
  readonly states: readonly NodeState[];
  readonly limit: number;
  /** The (canary-order position, node id) of the last row of the previous page. */
  readonly after: { readonly order: number; readonly nodeId: string } | undefined;
}

/**
 * One page of a campaign's node records in canary order, ties by node id (a stable order:
 * positions never change once the campaign is written); `more` when another page follows.
 */
export async function campaignNodePage(
  q: Queryable,
  query: CampaignNodePageQuery,
): Promise<{ nodes: CampaignNode[]; more: boolean }> {
  const params: unknown[] = [query.campaignId];
  const where = ["campaign_id = $1"];
  if (query.states.length > 0) {
    params.push(query.states);
    where.push(`state = any($${params.length}::text[])`);
  }
  if (query.after !== undefined) {
    params.push(query.after.order, query.after.nodeId);
    where.push(`(ord, node_id) > ($${params.length - 1}, $${params.length})`);
  }
  params.push(query.limit + 1);
  const result = await q.query<{ record: Record<string, unknown> }>(
    `select record from campaign_nodes where ${where.join(" and ")}
      order by ord, node_id limit $${params.length}`,
    params,
  );
  return {
    nodes: result.rows.slice(0, query.limit).map((r) => nodeFromJson(r.record)),
    more: result.rows.length > query.limit,
  };
}
