/**
 * Raw-SQL baselines on Control's own PostgreSQL, measured in the same run as the project
 * figures: a single-row autocommit UPDATE and an `UPDATE … FROM unnest` of many rows, on a
 * scratch table shaped like `nodes`' liveness columns (Control's tables are not touched).
 * Also the database counters the heartbeat scenario reads.
 */
import pg from "pg";
import { median, percentile } from "./stats.js";

/** Raw SQL timings, in milliseconds. */
export interface DbBaseline {
  readonly singleUpdateP50Ms: number;
  readonly singleUpdateP99Ms: number;
  readonly singleUpdates: number;
  readonly unnestRows: number;
  readonly unnestMedianMs: number;
}

/** Measures the baselines with `singles` single-row updates and `repeats` unnest updates. */
export async function measureDbBaseline(
  url: string,
  rows: number,
  singles: number,
  repeats: number,
): Promise<DbBaseline> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("drop table if exists bench_liveness");
    await client.query(
      "create table bench_liveness (id text primary key, last_seen timestamptz, online boolean)",
    );
    const ids = Array.from({ length: rows }, (_, i) => `bench-${String(i).padStart(6, "0")}`);
    await client.query(
      "insert into bench_liveness select id, now(), true from unnest($1::text[]) as t(id)",
      [ids],
    );
    await client.query("analyze bench_liveness");
    const single: number[] = [];
    for (let i = 0; i < singles; i++) {
      const start = performance.now();
      await client.query("update bench_liveness set last_seen = $2 where id = $1", [
        ids[i % rows],
        new Date(),
      ]);
      single.push(performance.now() - start);
    }
    const unnest: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const at = new Date();
      const start = performance.now();
      await client.query(
        `update bench_liveness set last_seen = greatest(bench_liveness.last_seen, v.last_seen)
         from unnest($1::text[], $2::timestamptz[]) as v(id, last_seen)
         where bench_liveness.id = v.id`,
        [ids, ids.map(() => at)],
      );
      unnest.push(performance.now() - start);
    }
    return {
      singleUpdateP50Ms: percentile(single, 50),
      singleUpdateP99Ms: percentile(single, 99),
      singleUpdates: singles,
      unnestRows: rows,
      unnestMedianMs: median(unnest),
    };
  } finally {
    await client.query("drop table if exists bench_liveness").catch(() => undefined);
    await client.end();
  }
}

/** Cumulative database counters (rows of `nodes` updated, transactions committed). */
export interface DbCounters {
  readonly nodeRowsUpdated: number;
  readonly commits: number;
  readonly at: number;
}

/** Reads {@link DbCounters} (PostgreSQL's cumulative statistics). */
export async function dbCounters(url: string): Promise<DbCounters> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Statistics are flushed by backends about once a second; this asks for fresh ones.
    await client.query("select pg_stat_clear_snapshot()");
    const nodes = await client.query<{ n: string }>(
      "select coalesce(n_tup_upd, 0)::text as n from pg_stat_user_tables where relname = 'nodes'",
    );
    const db = await client.query<{ n: string }>(
      "select xact_commit::text as n from pg_stat_database where datname = current_database()",
    );
    return {
      nodeRowsUpdated: Number(nodes.rows[0]?.n ?? 0),
      commits: Number(db.rows[0]?.n ?? 0),
      at: Date.now(),
    };
  } finally {
    await client.end();
  }
}
