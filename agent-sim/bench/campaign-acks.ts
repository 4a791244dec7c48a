/**
 * Ack-to-commit latency of ObservedState reports: the simulators note when each report
 * was sent; a bench-only row trigger on `campaign_operations` notes (fired at the end of
 * each statement that records reports, i.e. just before its autocommit) which node's
 * report in which phase was written, with the time Control's session handled the report (its
 * `report_at`). So each latency splits in two: sent → handled (the simulator's write, the
 * network, Control's event loop until the stream's message handler ran) and handled →
 * committed (the report buffered for the flusher, the flushes before it, the statement).
 * Installed for the scenario and removed after it.
 */
import pg from "pg";
import { phaseName } from "../../control/campaign-worker/intake.js";
import type { SimMarks } from "./sim-runner.js";

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates the probe table and trigger. */
export async function installAckProbe(url: string): Promise<void> {
  await withClient(url, async (client) => {
    await client.query(
      "create unlogged table if not exists bench_acks (node_id text, phase text, at timestamptz, handled timestamptz)",
    );
    // A row trigger, queued only for rows whose report changed and fired at the end of the
    // statement. The statement trigger it replaces joined the statement's old and new
    // transition tables; in some runs that join, inside a 10,000-row send stamp, ran for 20-26 s
    // (active, reading temporary files), and the reports queued behind the stamp waited for it.
    await client.query(`
      create or replace function bench_note_acks() returns trigger language plpgsql as $$
      begin
        insert into bench_acks values (new.node_id, new.report_phase, clock_timestamp(), new.report_at);
        return null;
      end $$`);
    await client.query("drop trigger if exists bench_acks_trigger on campaign_operations");
    await client.query(`
      create trigger bench_acks_trigger after update on campaign_operations for each row
        when (new.report_at is distinct from old.report_at)
        execute function bench_note_acks()`);
  });
}

/** Removes the trigger, function and table. */
export async function removeAckProbe(url: string): Promise<void> {
  await withClient(url, async (client) => {
    await client.query("drop trigger if exists bench_acks_trigger on campaign_operations");
    await client.query("drop function if exists bench_note_acks()");
    await client.query("drop table if exists bench_acks");
  });
}

/** Each written report's latency, in milliseconds, whole and in its two parts. */
export interface AckLatencies {
  /** Sent by the simulator → committed. */
  readonly total: number[];
  /** Sent → Control's session handled it. */
  readonly toHandled: number[];
  /** Handled → committed. */
  readonly toCommit: number[];
}

/**
 * Milliseconds from each report's sending to its write, for every written report that a
 * simulator noted (the latest report of that node and phase sent before the write), with the
 * two parts split at the moment Control handled it.
 */
export async function ackLatencies(url: string, marks: readonly SimMarks[]): Promise<AckLatencies> {
  const sent = new Map<string, number[]>();
  for (const m of marks) {
    for (const [nodeId, phase, at] of m.reports) {
      const key = `${nodeId} ${phaseName(phase) ?? phase}`;
      const list = sent.get(key) ?? [];
      list.push(at);
      sent.set(key, list);
    }
  }
  const rows = await withClient(url, async (client) => {
    const result = await client.query<{
      node_id: string;
      phase: string;
      ms: string;
      handled: string;
    }>(
      `select node_id, phase, (extract(epoch from at) * 1000)::text as ms,
              (extract(epoch from handled) * 1000)::text as handled from bench_acks`,
    );
    return result.rows;
  });
  const out: AckLatencies = { total: [], toHandled: [], toCommit: [] };
  for (const r of rows) {
    const written = Number(r.ms);
    const handled = Number(r.handled);
    const times = sent.get(`${r.node_id} ${r.phase}`) ?? [];
    const before = times.filter((t) => t <= written + 5);
    const last = before.length > 0 ? Math.max(...before) : undefined;
    if (last === undefined) continue;
    out.total.push(Math.max(0, written - last));
    out.toHandled.push(Math.max(0, handled - last));
    out.toCommit.push(Math.max(0, written - handled));
  }
  return out;
}
