/**
 * The campaign store: the SQL the worker and the admin API run on `campaigns`,
 * `campaign_nodes`, `campaign_operations`, `campaign_commands` and the audit log. Plain `pg`
 * statements on a client the caller holds (no identity map); many rows go in one statement
 * (`jsonb_to_recordset` / `unnest`). Transactions are the caller's ({@link inTransaction}).
 */
import type pg from "pg";
import type { CampaignNode, CampaignState } from "../campaign/index.js";
import {
  type CommandRow,
  type ConfigFailureRow,
  campaignFromJson,
  dateOrNull,
  nodeFromJson,
  type OperationFactRow,
} from "./rows.js";

/** Anything that runs a query: a pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query">;

/** Runs `fn` in one transaction on a pooled client; rolls back when it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const result = await fn(client);
    await client.query("commit");
    return result;
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A campaign row with its engine record. */
export interface CampaignRow {
  readonly campaign: CampaignState;
  readonly targetVersion: string;
  readonly createdBy: string;
  readonly updatedAt: Date;
  readonly finishedAt: Date | undefined;
  /** Optimistic fencing: a write names the version it read. */
  readonly version: number;
}

interface RawCampaignRow {
  state: Record<string, unknown>;
  target_version: string;
  created_by: string;
  updated_at: Date;
  finished_at: Date | null;
  version: number;
}

const CAMPAIGN_COLUMNS = "state, target_version, created_by, updated_at, finished_at, version";

function campaignRow(raw: RawCampaignRow): CampaignRow {
  return {
    campaign: campaignFromJson(raw.state),
    targetVersion: raw.target_version,
    createdBy: raw.created_by,
    updatedAt: raw.updated_at,
    finishedAt: raw.finished_at ?? undefined,
    version: raw.version,
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
        and state not in ('succeeded', 'failed', 'timed_out', 'skipped', 'canceled', 'rolled_back', 'rollback_failed')`,
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

/** Among `nodeIds`, those in a campaign that has not finished, with that campaign. */
export async function busyNodes(
  q: Queryable,
  nodeIds: readonly string[],
): Promise<Map<string, string>> {
  if (nodeIds.length === 0) return new Map();
  const result = await q.query<{ node_id: string; campaign_id: string }>(
    `select cn.node_id, cn.campaign_id from campaign_nodes cn
       join campaigns c on c.id = cn.campaign_id
     where c.finished_at is null and cn.node_id = any($1::text[])
     order by cn.node_id`,
    [nodeIds],
  );
  return new Map(result.rows.map((r) => [r.node_id, r.campaign_id]));
}

/** What a node's registry row says, for the facts of an offline node. */
export interface NodeRegistryRow {
  id: string;
  boot_id: string;
  agent_version: string;
  capabilities: string[];
  platform: string;
}

/** The registry rows of `nodeIds`. */
export async function readRegistry(
  q: Queryable,
  nodeIds: readonly string[],
): Promise<NodeRegistryRow[]> {
  if (nodeIds.length === 0) return [];
  const result = await q.query<NodeRegistryRow>(
    "select id, boot_id, agent_version, capabilities, platform from nodes where id = any($1::text[])",
    [nodeIds],
  );
  return result.rows;
}

/** The outbox rows of a campaign that carry a report or a send failure. */
export async function readOperationFacts(
  q: Queryable,
  campaignId: string,
): Promise<OperationFactRow[]> {
  const result = await q.query<OperationFactRow>(
    `select id, node_id, report_phase, report_code, report_message, report_version, report_at,
            failed_at, failure
       from campaign_operations
      where campaign_id = $1 and (report_phase is not null or failed_at is not null)`,
    [campaignId],
  );
  return result.rows;
}

/** The config failures recorded for a campaign's nodes. */
export async function readConfigFailures(
  q: Queryable,
  campaignId: string,
): Promise<ConfigFailureRow[]> {
  const result = await q.query<ConfigFailureRow>(
    "select node_id, at, boot_id, message from campaign_config_failures where campaign_id = $1 order by id",
    [campaignId],
  );
  return result.rows;
}

/** The commands of a campaign not applied yet, oldest first. */
export async function pendingCommands(q: Queryable, campaignId: string): Promise<CommandRow[]> {
  const result = await q.query<CommandRow & { id: string }>(
    `select id::text as id, kind, rollback, reason, actor, actor_ip from campaign_commands
      where campaign_id = $1 and applied_at is null order by id`,
    [campaignId],
  );
  return result.rows;
}

/** An audit row to insert with a campaign write. */
export interface AuditRow {
  readonly actor: string;
  readonly actorIp: string;
  readonly action: string;
  readonly campaignId: string;
  readonly nodeId?: string | undefined;
  readonly message: string;
  readonly detail?: Record<string, unknown>;
}

/** Inserts audit rows in the caller's transaction, in order. */
export async function insertAudits(
  q: Queryable,
  rows: readonly AuditRow[],
  time: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `insert into audit_events (time, actor, actor_ip, action, campaign_id, node_id, message, detail)
     select $2, x.actor, x.actor_ip, x.action, x.campaign_id, x.node_id, x.message, x.detail
       from jsonb_to_recordset($1::jsonb) as x(n int, actor text, actor_ip text, action text,
            campaign_id text, node_id text, message text, detail jsonb)
      order by x.n`,
    [
      JSON.stringify(
        rows.map((r, n) => ({
          n,
          actor: r.actor,
          actor_ip: r.actorIp,
          action: r.action,
          campaign_id: r.campaignId,
          node_id: r.nodeId ?? null,
          message: r.message,
          detail: r.detail ?? {},
        })),
      ),
      time,
    ],
  );
}

function campaignColumns(c: CampaignState) {
  return [c.phase, c.currentBatch, c.code ?? null, JSON.stringify(c), dateOrNull(c.finishedAt)];
}

/** What a new campaign row holds besides the engine's records. */
export interface NewCampaign {
  readonly campaign: CampaignState;
  readonly nodes: readonly CampaignNode[];
  readonly createdBy: string;
  readonly createdByIp: string;
  readonly now: Date;
}

/** Inserts a campaign and its nodes. */
export async function insertCampaign(q: Queryable, input: NewCampaign): Promise<void> {
  const c = input.campaign;
  await q.query(
    `insert into campaigns (id, target_version, target_sequence, phase, current_batch, code, state,
        finished_at, created_by, created_by_ip, retry_of, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
    [
      c.id,
      c.spec.targetVersion,
      c.targetSequence,
      ...campaignColumns(c),
      input.createdBy,
      input.createdByIp,
      c.retryOf ?? null,
      input.now,
    ],
  );
  await insertNodes(q, c.id, input.nodes, input.now);
}

async function insertNodes(
  q: Queryable,
  campaignId: string,
  nodes: readonly CampaignNode[],
  now: Date,
): Promise<void> {
  for (let i = 0; i < nodes.length; i += 5000) {
    await q.query(
      `insert into campaign_nodes (campaign_id, node_id, batch, ord, state, code, pool, updated_at,
          finished_at, record)
       select $1, x.node_id, x.batch, x.ord, x.state, x.code, x.pool, $3,
              to_timestamp(x.finished_ms / 1000.0), x.record
         from jsonb_to_recordset($2::jsonb) as x(node_id text, batch int, ord int, state text,
              code text, pool text, finished_ms double precision, record jsonb)`,
      [campaignId, nodesJson(nodes.slice(i, i + 5000)), now],
    );
  }
}

function nodesJson(nodes: readonly CampaignNode[]): string {
  return JSON.stringify(
    nodes.map((n) => ({
      node_id: n.nodeId,
      batch: n.batch,
      ord: n.order,
      state: n.state,
      code: n.code ?? null,
      pool: n.pool,
      finished_ms: n.finishedAt ?? null,
      record: n,
    })),
  );
}

/** An outbox row to insert. */
export interface NewOperation {
  readonly id: string;
  readonly campaignId: string;
  readonly nodeId: string;
  readonly kind: string;
  /** The encoded Operation, or null when it could not be built (see `failure`). */
  readonly payload: Uint8Array | null;
  /** Why it can never be delivered; recorded as a send failure fact. */
  readonly failure: string | undefined;
}

/** One decision's writes (the caller fenced the transaction and locked the campaign row). */
export interface DecisionWrite {
  readonly campaignId: string;
  /** The row version read; the write fails unless it is still current. */
  readonly version: number;
  readonly campaign: CampaignState | undefined;
  readonly nodes: readonly CampaignNode[];
  readonly operations: readonly NewOperation[];
  readonly appliedCommands: readonly { id: string; outcome: string }[];
  readonly audits: readonly AuditRow[];
  readonly now: Date;
}

/** Thrown when the campaign row changed since it was read. */
export class CampaignVersionConflict extends Error {
  override readonly name = "CampaignVersionConflict";
}

/**
 * Writes a decision: changed node rows, the campaign row (bumping its version and
 * `updated_at` whenever anything changed), outbox rows (insert-or-ignore: the ids are
 * deterministic), applied commands and audit rows.
 * @returns whether anything was written.
 */
export async function writeDecision(q: Queryable, w: DecisionWrite): Promise<boolean> {
  const changed =
    w.campaign !== undefined ||
    w.nodes.length > 0 ||
    w.operations.length > 0 ||
    w.appliedCommands.length > 0;
  if (!changed) return false;
  const updated = w.campaign
    ? await q.query(
        `update campaigns set phase = $3, current_batch = $4, code = $5, state = $6,
            finished_at = $7, updated_at = $8, version = version + 1
          where id = $1 and version = $2`,
        [w.campaignId, w.version, ...campaignColumns(w.campaign), w.now],
      )
    : await q.query(
        "update campaigns set updated_at = $3, version = version + 1 where id = $1 and version = $2",
        [w.campaignId, w.version, w.now],
      );
  if (updated.rowCount !== 1) {
    throw new CampaignVersionConflict(
      `campaign ${w.campaignId} changed since version ${w.version}`,
    );
  }
  if (w.nodes.length > 0) {
    await q.query(
      `update campaign_nodes cn set state = x.state, code = x.code, updated_at = $3,
          finished_at = to_timestamp(x.finished_ms / 1000.0), record = x.record
         from jsonb_to_recordset($2::jsonb) as x(node_id text, batch int, ord int, state text,
              code text, pool text, finished_ms double precision, record jsonb)
        where cn.campaign_id = $1 and cn.node_id = x.node_id`,
      [w.campaignId, nodesJson(w.nodes), w.now],
    );
  }
  if (w.operations.length > 0) {
    const ops = w.operations;
    await q.query(
      `insert into campaign_operations (id, campaign_id, node_id, kind, payload, created_at,
          failed_at, failure)
       select x.id, x.campaign_id, x.node_id, x.kind, x.payload, $7,
              case when x.failure is null then null else $7::timestamptz end, x.failure
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[])
              as x(id, campaign_id, node_id, kind, payload, failure)
       on conflict (id) do nothing`,
      [
        ops.map((o) => o.id),
        ops.map((o) => o.campaignId),
        ops.map((o) => o.nodeId),
        ops.map((o) => o.kind),
        ops.map((o) => (o.payload ? Buffer.from(o.payload) : null)),
        ops.map((o) => o.failure ?? null),
        w.now,
      ],
    );
  }
  if (w.appliedCommands.length > 0) {
    await q.query(
      `update campaign_commands c set applied_at = $2, outcome = x.outcome
         from unnest($1::jsonb[]) as j(v), jsonb_to_record(j.v) as x(id bigint, outcome text)
        where c.id = x.id`,
      [w.appliedCommands.map((c) => JSON.stringify(c)), w.now],
    );
  }
  await insertAudits(q, w.audits, w.now);
  return true;
}
