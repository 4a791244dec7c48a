/**
 * The reads of the SQL campaign store on `campaigns`, `campaign_nodes`, `campaign_operations`,
 * `campaign_commands` and the node registry. Plain `pg` statements on a client the caller
 * holds (no identity map). Transactions are the caller's ({@link inTransaction}).
 */
import type pg from "pg";
import type { CampaignNode, PoolLoad } from "../../campaign/index.js";
import type { CampaignRow, NodeRegistryRow } from "../port.js";
import {
  type CommandRow,
  type ConfigFailureRow,
  campaignFromJson,
  nodeFromJson,
  type OperationFactRow,
} from "../rows.js";
import { lateInFlight } from "./late-rollbacks.js";
import { busySql, holdsSlotSql, notFinalSql } from "./node-state-sql.js";

/** Anything that runs a query: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query">;

/**
 * Runs `fn` in one transaction on a pooled client; rolls back when it throws. A checked-out
 * client has no listener for its connection's errors (the pool listens only to idle ones),
 * so one that dies between two queries would raise an uncaught exception: the transaction
 * listens itself, and the dead client is destroyed instead of going back to the pool (the
 * next query of `fn` rejects with the connection's error).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on("error", onLost);
  try {
    await client.query("begin");
    const result = await fn(client);
    await client.query("commit");
    return result;
  } catch (error) {
    if (lost === undefined) await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.removeListener("error", onLost);
    client.release(lost);
  }
}

interface RawCampaignRow {
  state: Record<string, unknown>;
  target_version: string;
  created_by: string;
  updated_at: Date;
  finished_at: Date | null;
  version: number;
  engine_features: string[] | null;
}

const CAMPAIGN_COLUMNS =
  "state, target_version, created_by, updated_at, finished_at, version, engine_features";

function campaignRow(raw: RawCampaignRow): CampaignRow {
  return {
    campaign: campaignFromJson(raw.state),
    targetVersion: raw.target_version,
    createdBy: raw.created_by,
    updatedAt: raw.updated_at,
    finishedAt: raw.finished_at ?? undefined,
    version: raw.version,
    features: raw.engine_features ?? [],
  };
}

/** Reads one campaign; `lock` takes a row lock until the transaction ends. */
export async function readCampaign(
  q: Queryable,
  id: string,
  lock = false,
): Promise<CampaignRow | undefined> {
  const result = await q.query<RawCampaignRow>(
    `select ${CAMPAIGN_COLUMNS} from campaigns where id = $1${lock ? " for update" : ""}`,
    [id],
  );
  const raw = result.rows[0];
  return raw ? campaignRow(raw) : undefined;
}

/** Reads many campaigns by id, in no particular order. */
export async function readCampaigns(q: Queryable, ids: readonly string[]): Promise<CampaignRow[]> {
  if (ids.length === 0) return [];
  const result = await q.query<RawCampaignRow>(
    `select ${CAMPAIGN_COLUMNS} from campaigns where id = any($1::text[])`,
    [ids],
  );
  return result.rows.map(campaignRow);
}

/** Every node record of a campaign, in canary order. */
export async function readNodes(q: Queryable, campaignId: string): Promise<CampaignNode[]> {
  const result = await q.query<{ record: Record<string, unknown> }>(
    "select record from campaign_nodes where campaign_id = $1 order by ord",
    [campaignId],
  );
  return result.rows.map((r) => nodeFromJson(r.record));
}

/** The nodes of a campaign that are not in a final state. */
export async function openNodeIds(q: Queryable, campaignId: string): Promise<string[]> {
  const result = await q.query<{ node_id: string }>(
    `select node_id from campaign_nodes where campaign_id = $1
        and ${notFinalSql("state")}`,
    [campaignId],
  );
  return result.rows.map((r) => r.node_id);
}

/** Ids of the campaigns not finished yet (the worker's work list), oldest first. */
export async function liveCampaignIds(q: Queryable): Promise<string[]> {
  const result = await q.query<{ id: string }>(
    "select id from campaigns where finished_at is null order by created_at, id",
  );
  return result.rows.map((r) => r.id);
}

/**
 * Among `nodeIds`, those in flight in a campaign, with that campaign: not final in a campaign
 * that has not finished, or in the current batch of a campaign still running, paused or
 * rolling back (that batch can still roll back and send them a rollback). A node that ended
 * in a campaign whose other nodes still run is free.
 */
export async function busyNodes(
  q: Queryable,
  nodeIds: readonly string[],
): Promise<Map<string, string>> {
  if (nodeIds.length === 0) return new Map();
  const result = await q.query<{ node_id: string; campaign_id: string }>(
    `select cn.node_id, cn.campaign_id from campaign_nodes cn
       join campaigns c on c.id = cn.campaign_id
     where c.finished_at is null and cn.node_id = any($1::text[])
       and ${busySql("cn", "c")}
     order by cn.node_id`,
    [nodeIds],
  );
  return new Map(result.rows.map((r) => [r.node_id, r.campaign_id]));
}

/** See {@link CampaignStore.liveCampaignOfNodes}. */
export async function liveCampaignOfNodes(
  q: Queryable,
  nodeIds: readonly string[],
): Promise<Map<string, string>> {
  if (nodeIds.length === 0) return new Map();
  const result = await q.query<{ node_id: string; campaign_id: string }>(
    `select distinct on (cn.node_id) cn.node_id, cn.campaign_id from campaign_nodes cn
       join campaigns c on c.id = cn.campaign_id
      where c.finished_at is null and cn.node_id = any($1::text[])
      order by cn.node_id, c.created_at desc, c.id desc`,
    [[...new Set(nodeIds)]],
  );
  return new Map(result.rows.map((r) => [r.node_id, r.campaign_id]));
}

/** The registry rows of `nodeIds`. */
export async function readRegistry(
  q: Queryable,
  nodeIds: readonly string[],
): Promise<NodeRegistryRow[]> {
  if (nodeIds.length === 0) return [];
  const result = await q.query<NodeRegistryRow>(
    "select id, boot_id, agent_version, capabilities, platform, enabled and not pending as enabled, revoked_at is not null as revoked, last_seen, online, held_by from nodes where id = any($1::text[])",
    [nodeIds],
  );
  return result.rows;
}

/** The outbox rows of a campaign (of `nodeIds` only, when given) that carry a report or a send failure. */
export async function readOperationFacts(
  q: Queryable,
  campaignId: string,
  nodeIds?: readonly string[],
): Promise<OperationFactRow[]> {
  const result = await q.query<OperationFactRow>(
    `select id, node_id, report_phase, report_code, report_message, report_version, report_at,
            report_boot_id, report_seq, failed_at, failure
       from campaign_operations
      where campaign_id = $1 and (report_phase is not null or failed_at is not null)
        ${nodeIds === undefined ? "" : "and node_id = any($2::text[])"}`,
    nodeIds === undefined ? [campaignId] : [campaignId, nodeIds],
  );
  return result.rows;
}

/**
 * The config failures recorded for a campaign's nodes (`nodeIds` only, when given), in the order
 * the database took them (never by their stamps, each the clock of the Control that received it).
 */
export async function readConfigFailures(
  q: Queryable,
  campaignId: string,
  nodeIds?: readonly string[],
): Promise<ConfigFailureRow[]> {
  const result = await q.query<ConfigFailureRow>(
    `select node_id, at, boot_id, message from campaign_config_failures
      where campaign_id = $1 ${nodeIds === undefined ? "" : "and node_id = any($2::text[])"}
      order by id`,
    nodeIds === undefined ? [campaignId] : [campaignId, nodeIds],
  );
  return result.rows;
}

/** The commands of a campaign not applied yet, oldest first. */
export async function pendingCommands(q: Queryable, campaignId: string): Promise<CommandRow[]> {
  const result = await q.query<CommandRow & { id: string }>(
    `select id::text as id, kind, rollback, gate, reason, actor, actor_ip from campaign_commands
      where campaign_id = $1 and applied_at is null order by id`,
    [campaignId],
  );
  return result.rows;
}

/**
 * The nodes in flight per pool (`$1`) in unfinished campaigns other than `$2`, as the engine's
 * `inFlight` counts them at `$3` (ms): offered, applying, restarting, rolling back, verifying
 * until their grace ends, or final with a rollback pending. Every decision reads it, so it
 * reads through the partial indexes of the rows that may hold a slot (`campaign_nodes_slot_idx`,
 * migration 0022, and `campaign_nodes_rollback_slot_idx`, migration 0025, one arm of
 * `holdsSlotSql`'s `or` each): its cost follows the nodes in flight, not every campaign's
 * history.
 */
export const IN_FLIGHT_ELSEWHERE_SQL = `select cn.pool, count(*) as n from campaign_nodes cn
       join campaigns c on c.id = cn.campaign_id and c.finished_at is null
      where cn.pool = any($1::text[]) and cn.campaign_id <> $2
        and ${holdsSlotSql("cn", "$3")}
      group by cn.pool`;

/** See {@link CampaignTransaction.poolLoads}. */
export async function poolLoads(
  q: Queryable,
  pools: readonly string[],
  excludingCampaignId: string,
  now: number,
): Promise<Map<string, PoolLoad>> {
  const out = new Map<string, PoolLoad>();
  if (pools.length === 0) return out;
  const sizes = await q.query<{ pool: string; n: string }>(
    "select pool, count(*) as n from nodes where enabled and pool = any($1::text[]) group by pool",
    [pools],
  );
  const busy = await q.query<{ pool: string; n: string }>(IN_FLIGHT_ELSEWHERE_SQL, [
    pools,
    excludingCampaignId,
    now,
  ]);
  for (const pool of pools) out.set(pool, { size: 0, inFlightElsewhere: 0 });
  for (const r of sizes.rows) out.set(r.pool, { size: Number(r.n), inFlightElsewhere: 0 });
  for (const r of busy.rows) {
    const load = out.get(r.pool) ?? { size: 0, inFlightElsewhere: 0 };
    out.set(r.pool, { size: load.size, inFlightElsewhere: Number(r.n) });
  }
  // Late rollbacks delivered and not done with hold a slot too (a finished campaign's).
  for (const [pool, n] of await lateInFlight(q, pools, now)) {
    const load = out.get(pool) ?? { size: 0, inFlightElsewhere: 0 };
    out.set(pool, { size: load.size, inFlightElsewhere: load.inFlightElsewhere + n });
  }
  return out;
}
