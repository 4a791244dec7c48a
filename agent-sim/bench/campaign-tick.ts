/**
 * The campaign tick scenario: one decision of Control's campaign worker (the real
 * `runDecision`, its working copy and leader fence) over a campaign seeded directly in the
 * database, against the raw SQL the same tick needs at least, measured in the same run.
 *
 * Each campaign has N nodes in one running batch: 1,000 offered (in flight, concurrency
 * 1,000), half of the rest succeeded and half waiting. A warm-up decision loads the working
 * copy; then every in-flight node reports APPLYING (written as the intake writes reports) and
 * the measured tick re-reads those facts, judges the 1,000 nodes and writes the 1,000 that
 * moved to applying. The baseline reads the same 1,000 outbox rows and node records and
 * writes the same 1,000 records back with one `UPDATE … FROM jsonb_to_recordset`.
 *
 * It runs in a database of its own on Control's PostgreSQL server (created and dropped
 * here), so Control's worker never sees these campaigns.
 */

import pg from "pg";
import { pino } from "pino";
import {
  type CampaignNode,
  createCampaign,
  DEFAULT_POLICY,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import { createSqlCampaignStore, insertCampaign } from "../../control/campaign-store/index.js";
import { type DecisionDeps, runDecision } from "../../control/campaign-worker/decision.js";
import type { WorkerGateway } from "../../control/campaign-worker/facts.js";
import { WorkingCopies } from "../../control/campaign-worker/working-copy.js";
import { systemClock } from "../../control/clock.js";
import { openDatabase } from "../../control/db/database.js";
import type { BenchRow } from "./rows.js";
import { median, ratio, spreadOf } from "./stats.js";

const DB_NAME = "agent_control_tick";
const TARGET = "2.0.0";

/** One fleet size's figures, in milliseconds (medians over the repetitions). */
export interface TickResult {
  readonly nodes: number;
  readonly inFlight: number;
  readonly tickMs: number;
  readonly baselineMs: number;
  /** The warm-up decision that loads the working copy (once per campaign, after a takeover). */
  readonly loadMs: number;
  /** Nodes the measured tick changed (must be `inFlight`). */
  readonly changed: number;
  readonly samples: { tick: number[]; baseline: number[]; load: number[] };
}

/** A gateway with no stream open: every node is judged from the database alone. */
const OFFLINE: WorkerGateway = {
  send: () => false,
  connected: () => undefined,
  subscribe: () => () => {},
};

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Seeds campaign `id` with `n` nodes in one running batch (`inFlight` offered, half of the
 * rest succeeded, half waiting), their registry rows and the offered nodes' outbox rows.
 * @returns the ids of the offered nodes.
 */
export async function seedCampaign(
  pool: pg.Pool,
  id: string,
  n: number,
  inFlight: number,
): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${id}-${String(i).padStart(6, "0")}`);
  await pool.query(
    `insert into nodes (id, agent_version, capabilities, platform, first_seen, boot_id)
     select x, '1.0.0', '["upgrade.v1","config.v1"]'::jsonb, 'linux-amd64', now(), 'b0'
       from unnest($1::text[]) as x`,
    [ids],
  );
  const spec = resolveSpec(
    {
      targetVersion: TARGET,
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: inFlight,
      reconnectTimeoutMs: 3_600_000,
    },
    { ...DEFAULT_POLICY, minBatchDurationMs: 0, firstBatchMaxPercent: 100 },
  );
  const candidates = ids.map((nodeId) => ({
    id: nodeId,
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1", "config.v1"],
    agentVersion: "1.0.0",
  }));
  const now = Date.now();
  const plan = planCampaign(spec, candidates);
  const created = createCampaign({
    id,
    spec,
    plan,
    target: { version: TARGET, sequence: 2 },
    now,
  });
  const rest = n - inFlight;
  const nodes: CampaignNode[] = created.nodes.map((node, i) => {
    if (i < inFlight) {
      return {
        ...node,
        state: "offered",
        upgradeOperationId: operationId(id, node.nodeId, "upgrade"),
        offeredAt: now,
        offerBootId: "b0",
        previousVersion: "1.0.0",
        reconnectDeadline: now + 3_600_000,
        stateChangedAt: now,
      };
    }
    if (i < inFlight + Math.floor(rest / 2)) {
      return {
        ...node,
        state: "succeeded",
        previousVersion: "1.0.0",
        version: TARGET,
        stateChangedAt: now,
        finishedAt: now,
      };
    }
    return node;
  });
  await insertCampaign(pool, {
    campaign: created.campaign,
    nodes,
    createdBy: "bench",
    createdByIp: "127.0.0.1",
    now: new Date(now),
  });
  const flying = nodes.slice(0, inFlight).map((node) => node.nodeId);
  await pool.query(
    `insert into campaign_operations (id, campaign_id, node_id, kind, payload, created_at, last_sent_at, send_count)
     select $1 || '/' || x || '/upgrade', $1, x, 'upgrade', '\\x00'::bytea, now(), now(), 1
       from unnest($2::text[]) as x`,
    [id, flying],
  );
  return flying;
}

/** Writes an APPLYING report for each in-flight node, as the intake writes reports. */
async function report(pool: pg.Pool, id: string, flying: readonly string[]): Promise<void> {
  const at = new Date();
  await pool.query(
    `update campaign_operations o set report_phase = 'APPLYING', report_code = '',
        report_message = '', report_version = '', report_at = $3, acked_at = coalesce(o.acked_at, $3)
       from unnest($2::text[]) as x(node_id)
      where o.campaign_id = $1 and o.node_id = x.node_id`,
    [id, flying, at],
  );
}

/** The raw SQL the tick needs at least: read the in-flight facts and records, write them back. */
async function baseline(pool: pg.Pool, id: string, flying: readonly string[]): Promise<number> {
  const began = performance.now();
  const client = await pool.connect();
  try {
    await client.query("begin");
    await client.query(
      `select id, node_id, report_phase, report_code, report_message, report_version, report_at,
              failed_at, failure
         from campaign_operations where campaign_id = $1 and node_id = any($2::text[])`,
      [id, flying],
    );
    const records = await client.query<{ node_id: string; record: Record<string, unknown> }>(
      "select node_id, record from campaign_nodes where campaign_id = $1 and node_id = any($2::text[])",
      [id, flying],
    );
    const changed = records.rows.map((r) => ({
      node_id: r.node_id,
      state: "applying",
      record: { ...r.record, state: "applying" },
    }));
    await client.query(
      `update campaign_nodes cn set state = x.state, record = x.record, updated_at = now()
         from jsonb_to_recordset($2::jsonb) as x(node_id text, state text, record jsonb)
        where cn.campaign_id = $1 and cn.node_id = x.node_id`,
      [id, JSON.stringify(changed)],
    );
    await client.query("commit");
  } finally {
    client.release();
  }
  return performance.now() - began;
}

/**
 * Measures the tick at each fleet size (`repeats` fresh campaigns each) on the PostgreSQL
 * server of `url` (any database there; a scratch one is created beside it).
 */
export async function measureCampaignTicks(
  url: string,
  sizes: readonly number[],
  options: { inFlight?: number; repeats?: number; say?: (text: string) => void } = {},
): Promise<TickResult[]> {
  const inFlight = options.inFlight ?? 1000;
  const repeats = options.repeats ?? 3;
  await admin(url, `drop database if exists ${DB_NAME}`);
  await admin(url, `create database ${DB_NAME}`);
  const log = pino({ level: "silent" });
  const db = await openDatabase({ url: withDatabase(url, DB_NAME), log, poolSize: 4 });
  const store = createSqlCampaignStore(db, log, systemClock);
  const lease = store.lease({ holder: "bench-tick", name: "bench-tick", ttlMs: 15_000 });
  const results: TickResult[] = [];
  try {
    if (!(await lease.tick())) throw new Error("could not take the tick benchmark's lease");
    for (const n of sizes) {
      const samples = { tick: [] as number[], baseline: [] as number[], load: [] as number[] };
      let changed = 0;
      for (let rep = 0; rep < repeats; rep++) {
        const id = `t${n}r${rep}`;
        options.say?.(`campaign tick: seeding ${n} nodes (${inFlight} in flight), run ${rep + 1}`);
        // Every run starts from empty tables: the campaigns of earlier runs, left live, would
        // add their in-flight nodes to the pool budget each decision reads.
        await db.pool.query(
          `truncate campaigns, campaign_nodes, campaign_operations, campaign_commands,
             campaign_config_failures, campaign_gate_results, audit_events, nodes
           restart identity cascade`,
        );
        const flying = await seedCampaign(db.pool, id, n, inFlight);
        await db.pool.query("analyze");
        const copies = new WorkingCopies();
        const deps: DecisionDeps = {
          store,
          lease,
          gateway: OFFLINE,
          clock: systemClock,
          release: async () => undefined,
          publicUrl: () => "http://127.0.0.1",
          copies,
          liveness: { readyAt: 0, offlineAfterMs: 120_000, lastHeardMs: () => undefined },
          self: "bench-tick",
        };
        let began = performance.now();
        await runDecision(deps, id);
        samples.load.push(performance.now() - began);
        await report(db.pool, id, flying);
        for (const nodeId of flying) copies.markStale(id, nodeId);
        began = performance.now();
        const out = await runDecision(deps, id);
        samples.tick.push(performance.now() - began);
        changed = out.decision?.changes.nodes.length ?? 0;
        samples.baseline.push(await baseline(db.pool, id, flying));
      }
      results.push({
        nodes: n,
        inFlight,
        tickMs: median(samples.tick),
        baselineMs: median(samples.baseline),
        loadMs: median(samples.load),
        changed,
        samples,
      });
    }
  } finally {
    await lease.release();
    await db.close();
    await admin(url, `drop database if exists ${DB_NAME}`);
  }
  return results;
}

/** The table rows of the tick scenario; `maxRatio` makes quick mode fail beyond it. */
export function tickRows(results: readonly TickResult[], maxRatio?: number): BenchRow[] {
  const smallest = results[0];
  return results.map((r) => {
    const growth =
      smallest && r !== smallest
        ? `; ${(r.tickMs / smallest.tickMs).toFixed(2)}× the tick at ${smallest.nodes.toLocaleString("en-US")} nodes`
        : "";
    const value = ratio(r.tickMs, r.baselineMs);
    return {
      scenario: `campaign tick (${r.inFlight.toLocaleString("en-US")} in flight report) vs raw read + unnest update`,
      n: r.nodes,
      unit: "ms",
      project: r.tickMs,
      baseline: r.baselineMs,
      baselineName:
        "raw SQL: read the in-flight outbox rows and records, UPDATE … FROM jsonb_to_recordset",
      ratio: value,
      goal: "≤ 2×",
      met: value <= 2,
      ...(maxRatio === undefined ? {} : { maxRatio }),
      // Each repeat times the tick and its baseline back to back: paired.
      spread: spreadOf(r.samples.tick.map((t, i) => ratio(t, r.samples.baseline[i] ?? 0))),
      note: `${r.changed} nodes changed; loading the working copy (once per campaign after a takeover) ${r.loadMs.toFixed(0)} ms${growth}`,
    };
  });
}
