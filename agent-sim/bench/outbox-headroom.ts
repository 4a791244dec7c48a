/**
 * A diagnosis tool behind migration 0020 (not part of `npm run bench`): on a scratch table made
 * `like campaign_operations` (its columns, defaults and indexes as the migrations left them, so
 * an index a later migration adds is measured too; 10,000 rows), the send stamp of every row and
 * then five rounds of reports (one per phase, in writes of 1,000 as the intake writes them),
 * once with each fillfactor; prints each setting's median and p90 write and the WAL it wrote.
 * The table is dropped at the end; `campaign_operations` itself is only read.
 *
 * Usage: `npx tsx agent-sim/bench/outbox-headroom.ts --url postgres://<a migrated database> [--payload 1500]`
 */
import { parseArgs } from "node:util";
import pg from "pg";

const ROWS = 10_000;
const WRITE = 1_000;
const PHASES = ["ACCEPTED", "DOWNLOADING", "APPLYING", "RESTARTING", "CONFIRMED"];

async function measure(client: pg.Client, fillfactor: number, payloadBytes: number) {
  const q = (text: string, values?: unknown[]) => client.query(text, values);
  await q("drop table if exists bench_outbox_headroom");
  // Foreign keys are not copied by `like`: the rows need no campaign.
  await q(`create table bench_outbox_headroom
      (like campaign_operations including defaults including constraints including indexes)
      with (fillfactor = ${fillfactor})`);
  await q(
    `insert into bench_outbox_headroom (id, campaign_id, node_id, kind, payload, created_at)
     select 'c1/n' || i || '/upgrade', 'c1', 'n' || i, 'upgrade', decode(repeat('ab', $1), 'hex'), now()
       from generate_series(1, ${ROWS}) i`,
    [payloadBytes],
  );
  await q("checkpoint");
  const ids = Array.from({ length: ROWS }, (_, i) => `c1/n${i + 1}/upgrade`);
  const walBefore = (await q("select pg_current_wal_lsn() as lsn")).rows[0].lsn as string;
  await q(
    `update bench_outbox_headroom set last_sent_at = now(), send_count = send_count + 1
      where id = any($1::text[])`,
    [ids],
  );
  const times: number[] = [];
  for (const phase of PHASES) {
    for (let from = 0; from < ROWS; from += WRITE) {
      const slice = ids.slice(from, from + WRITE);
      const started = performance.now();
      await q(
        `update bench_outbox_headroom o set report_phase = x.phase, report_code = '',
            report_message = '', report_version = '2.0.0', report_at = now(), report_boot_id = 'b',
            acked_at = coalesce(o.acked_at, now())
           from unnest($1::text[], $2::text[]) as x(id, phase) where o.id = x.id`,
        [slice, slice.map(() => phase)],
      );
      times.push(performance.now() - started);
    }
  }
  const wal = await q("select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as bytes", [walBefore]);
  await q("drop table bench_outbox_headroom");
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
  return { p50: at(0.5), p90: at(0.9), walMb: Number(wal.rows[0].bytes) / 1e6 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: "string" }, payload: { type: "string", default: "1500" } },
    strict: true,
  });
  if (values.url === undefined) throw new Error("--url postgres://… is required");
  const payload = Number(values.payload);
  const client = new pg.Client({ connectionString: values.url });
  await client.connect();
  try {
    for (const fillfactor of [100, 70]) {
      const r = await measure(client, fillfactor, payload);
      process.stdout.write(
        `fillfactor ${fillfactor}, payload ${payload} B: ${WRITE}-row report write p50 ${r.p50.toFixed(1)} ms, p90 ${r.p90.toFixed(1)} ms; WAL ${r.walMb.toFixed(1)} MB\n`,
      );
    }
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`outbox-headroom: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
