/**
 * The writes of the SQL campaign store: new campaigns with their nodes, and each decision
 * (campaign, nodes, outbox rows, applied commands, audit rows) in the caller's transaction.
 * Many rows go in one statement (`jsonb_to_recordset` / `unnest`).
 */
import { type CampaignNode, type CampaignState, campaignFeatures } from "../../campaign/index.js";
import {
  type AuditRow,
  CampaignVersionConflict,
  type DecisionWrite,
  type NewCampaign,
  writesSomething,
} from "../port.js";
import { CAMPAIGN_KEYS, dateOrNull, NODE_KEYS } from "../rows.js";
import type { Queryable } from "./reads.js";

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
          campaign_id: r.campaignId ?? null,
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

/** Inserts a campaign and its nodes. */
export async function insertCampaign(q: Queryable, input: NewCampaign): Promise<void> {
  const c = input.campaign;
  await q.query(
    `insert into campaigns (id, target_version, target_sequence, phase, current_batch, code, state,
        finished_at, created_by, created_by_ip, retry_of, created_at, updated_at, engine_features)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13::text[])`,
    [
      c.id,
      c.spec.targetVersion,
      c.targetSequence,
      ...campaignColumns(c),
      input.createdBy,
      input.createdByIp,
      c.retryOf ?? null,
      input.now,
      [...(input.features ?? campaignFeatures(c.spec))],
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

/**
 * Writes a decision: changed node rows, the campaign row (bumping its version and
 * `updated_at` whenever anything changed), outbox rows (insert-or-ignore: the ids are
 * deterministic), applied commands and audit rows. A node row's `batch` column follows its
 * record's (a deferring node carried over to the next batch moves: `deferral.ts`).
 *
 * A record is merged, not replaced: the fields of the stored JSON this release does not know
 * (written by a newer release running beside it) are kept, and every field it knows is the
 * record's own (one it left `undefined` is removed). Only the top level is merged: the records'
 * nested objects (`spec`, `batches`) travel whole, unknown fields included.
 * @returns whether anything was written.
 */
export async function writeDecision(q: Queryable, w: DecisionWrite): Promise<boolean> {
  if (!writesSomething(w)) return false;
  const updated = w.campaign
    ? await q.query(
        `update campaigns set phase = $3, current_batch = $4, code = $5,
            state = (state - $9::text[]) || $6::jsonb,
            finished_at = $7, updated_at = $8, version = version + 1
          where id = $1 and version = $2`,
        [w.campaignId, w.version, ...campaignColumns(w.campaign), w.now, CAMPAIGN_KEYS],
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
      `update campaign_nodes cn set state = x.state, code = x.code, batch = x.batch, updated_at = $3,
          finished_at = to_timestamp(x.finished_ms / 1000.0),
          record = (cn.record - $4::text[]) || x.record
         from jsonb_to_recordset($2::jsonb) as x(node_id text, batch int, ord int, state text,
              code text, pool text, finished_ms double precision, record jsonb)
        where cn.campaign_id = $1 and cn.node_id = x.node_id`,
      [w.campaignId, nodesJson(w.nodes), w.now, NODE_KEYS],
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
       on conflict (id) do update set
          payload = excluded.payload, created_at = excluded.created_at, last_sent_at = null,
          send_count = 0, acked_at = null, report_phase = null, report_code = null,
          report_message = null, report_version = null, report_at = null, report_boot_id = null,
          failed_at = excluded.failed_at, failure = excluded.failure
        where campaign_operations.report_phase = 'DEFERRED'`,
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
