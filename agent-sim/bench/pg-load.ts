/**
 * What Control costs its PostgreSQL over a window, for docs/CAPACITY.md: transactions
 * committed, rows written (inserted, updated, deleted), WAL bytes, notifications, connections
 * and the CPU of every postgres process, read from the database's own statistics
 * (`pg_stat_database`, `pg_current_wal_lsn()`, `pg_stat_activity`), a listener on Control's
 * notification channels, and /proc. The meter's own statements are one per sample and are
 * taken out of the commit count.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import {
  CAMPAIGNS_CHANNEL,
  CUTOFF_CHANNEL,
  FACTS_CHANNEL,
  NODES_CHANNEL,
  OUTBOX_CHANNEL,
} from "../../control/shared/notify-channels.js";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The counters at one moment (each only grows). */
interface Counters {
  readonly at: number;
  readonly commits: number;
  readonly inserted: number;
  readonly updated: number;
  readonly deleted: number;
  readonly walBytes: number;
  readonly cpuSeconds: number;
  readonly notifications: number;
  readonly connections: number;
}

/** PostgreSQL's load over a window, per second. */
export interface PgLoad {
  readonly seconds: number;
  readonly commitsPerSecond: number;
  readonly rowsInsertedPerSecond: number;
  readonly rowsUpdatedPerSecond: number;
  readonly rowsDeletedPerSecond: number;
  readonly walBytesPerSecond: number;
  readonly notificationsPerSecond: number;
  /** Cores of CPU used by all postgres processes (the postmaster's reaped children included). */
  readonly postgresCores: number;
  /** The most client connections seen at a sample (the meter's own left out). */
  readonly connectionsMax: number;
}

/** A running meter: `window()` starts a window, `end()` of it gives its load. */
export interface PgLoadMeter {
  window(): Promise<{ end(): Promise<PgLoad> }>;
  close(): Promise<void>;
}

/** CPU seconds of a process, with those of its children it has reaped when `reaped`. */
async function processCpu(pid: number, reaped: boolean): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  if (stat === "") return 0;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const own = Number(fields[11]) + Number(fields[12]);
  const children = reaped ? Number(fields[13]) + Number(fields[14]) : 0;
  return (own + children) / TICKS_PER_SECOND;
}

/** The parent pid of a process (0 when it is gone). */
async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  if (stat === "") return 0;
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** CPU seconds of the postmaster `postmaster` and every live child of it. */
async function postgresCpu(postmaster: number): Promise<number> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);
  const parents = await Promise.all(pids.map((pid) => parentOf(pid)));
  const children = pids.filter((_, i) => parents[i] === postmaster);
  const times = await Promise.all(children.map((pid) => processCpu(pid, false)));
  return (await processCpu(postmaster, true)) + times.reduce((a, b) => a + b, 0);
}

/** Opens a meter on the database at `databaseUrl` (Control's, running on this machine). */
export async function openPgLoadMeter(databaseUrl: string): Promise<PgLoadMeter> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  let notifications = 0;
  client.on("notification", () => {
    notifications++;
  });
  for (const channel of [
    OUTBOX_CHANNEL,
    NODES_CHANNEL,
    FACTS_CHANNEL,
    CAMPAIGNS_CHANNEL,
    CUTOFF_CHANNEL,
  ]) {
    await client.query(`listen ${channel}`);
  }
  const dataDir = (
    await client.query<{ d: string }>("select current_setting('data_directory') as d")
  ).rows[0]?.d as string;
  const postmaster = Number(
    (await readFile(join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0],
  );
  let ownStatements = 0;
  const read = async (): Promise<Counters> => {
    ownStatements++;
    const row = (
      await client.query<Record<string, string>>(
        `select xact_commit + xact_rollback as commits, tup_inserted, tup_updated, tup_deleted,
                pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint as wal,
                (select count(*) from pg_stat_activity
                  where datname = current_database() and pid <> pg_backend_pid()) as connections
           from pg_stat_database where datname = current_database()`,
      )
    ).rows[0] as Record<string, string>;
    return {
      at: Date.now(),
      commits: Number(row.commits) - ownStatements,
      inserted: Number(row.tup_inserted),
      updated: Number(row.tup_updated),
      deleted: Number(row.tup_deleted),
      walBytes: Number(row.wal),
      cpuSeconds: await postgresCpu(postmaster),
      notifications,
      connections: Number(row.connections),
    };
  };
  return {
    async window() {
      const first = await read();
      let connectionsMax = first.connections;
      const timer = setInterval(() => {
        read()
          .then((c) => {
            connectionsMax = Math.max(connectionsMax, c.connections);
          })
          .catch(() => undefined);
      }, 5000);
      return {
        async end() {
          clearInterval(timer);
          // pg_stat_database is fed by each backend at most once a second.
          await new Promise((r) => setTimeout(r, 1100));
          const last = await read();
          const seconds = (last.at - first.at) / 1000;
          const rate = (pick: (c: Counters) => number) => (pick(last) - pick(first)) / seconds;
          return {
            seconds,
            commitsPerSecond: rate((c) => c.commits),
            rowsInsertedPerSecond: rate((c) => c.inserted),
            rowsUpdatedPerSecond: rate((c) => c.updated),
            rowsDeletedPerSecond: rate((c) => c.deleted),
            walBytesPerSecond: rate((c) => c.walBytes),
            notificationsPerSecond: rate((c) => c.notifications),
            postgresCores: rate((c) => c.cpuSeconds),
            connectionsMax: Math.max(connectionsMax, last.connections),
          };
        },
      };
    },
    async close() {
      await client.end();
    },
  };
}

/** The loads as a Markdown table, per phase, with each rate also per 1,000 agents. */
export function pgLoadTable(agents: number, loads: Readonly<Record<string, PgLoad>>): string {
  const per = agents / 1000;
  const cell = (n: number, digits = 1) => `${n.toFixed(digits)} (${(n / per).toFixed(digits)})`;
  const head = [
    `PostgreSQL per phase, ${agents.toLocaleString("en-US")} agents: each rate per second (per 1,000 agents)`,
    "",
    "| phase | window (s) | commits/s | rows inserted/s | rows updated/s | rows deleted/s | WAL KB/s | notifications/s | postgres cores | connections (max) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  const rows = Object.entries(loads).map(
    ([phase, l]) =>
      `| ${phase} | ${l.seconds.toFixed(0)} | ${cell(l.commitsPerSecond)} | ${cell(l.rowsInsertedPerSecond)} | ${cell(l.rowsUpdatedPerSecond)} | ${cell(l.rowsDeletedPerSecond)} | ${cell(l.walBytesPerSecond / 1024)} | ${cell(l.notificationsPerSecond)} | ${cell(l.postgresCores, 3)} | ${l.connectionsMax} |`,
  );
  return [...head, ...rows, ""].join("\n");
}
