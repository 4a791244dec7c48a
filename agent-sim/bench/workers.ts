/**
 * The `--workers` scenario: one Control started as `npm start -- --workers W` (W processes
 * holding agent streams on one shared agent port, one embedded PostgreSQL), a fleet of N
 * agents held across them, then the rollout of the campaign scenarios on that fleet.
 *
 * It reports memory per held stream over all of Control's processes (the primary included)
 * against the bare grpc-js server's figure from the same run, how the streams spread over
 * the workers (each must stay under a process's open-file limit), the rollout rate, and what
 * PostgreSQL carries (`pg-load.ts`) in steady state, in a reconnect storm of the agents' own
 * (every simulator drops all its streams at once) and during the rollout.
 */
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { CAMPAIGN_POLICY, type CampaignResult, runCampaignScenarios } from "./campaign.js";
import type { BenchRelease } from "./campaign-release.js";
import { type BenchControl, startBenchControl } from "./control.js";
import { measureDbBaseline } from "./db-baseline.js";
import { openPgLoadMeter, type PgLoad } from "./pg-load.js";
import {
  type EventLoopDelay,
  eventLoopDelay,
  hookPid,
  type MemorySnapshot,
  memorySnapshot,
} from "./proc-stats.js";
import { type SimProcess, sleep, startSimProcesses, waitWelcomed } from "./processes.js";
import type { BenchRow } from "./rows.js";
import type { Target } from "./target.js";

/** How the scenario runs. */
export interface WorkersPlan {
  /** `--workers W`. */
  readonly workers: number;
  /** Agents held across the workers. */
  readonly agents: number;
  /** Agents per simulator process (each holds one file per agent). */
  readonly agentsPerSimulator: number;
  /** New connections per second, all simulators together. */
  readonly connectRate: number;
  readonly timeoutMs: number;
  /** Control's heartbeat interval (default 10 s; longer for a fleet this machine's cores cannot beat for). */
  readonly heartbeatSeconds?: number;
  /** Whether the campaign scenarios run on the held fleet (default true). */
  readonly rollout?: boolean;
  readonly release: BenchRelease;
  /** The bare server's RSS per held stream (KB) and the fleet it was measured at. */
  readonly bare: { readonly rssKbPerStream: number; readonly streams: number };
  readonly dir: string;
  readonly say: (text: string) => void;
}

/** What the scenario measured. */
export interface WorkersResult {
  readonly rows: BenchRow[];
  readonly raw: Record<string, unknown>;
  /** PostgreSQL's load per phase (steady state, storm, rollout). */
  readonly pgLoad: Readonly<Record<string, PgLoad>>;
}

/** How long the steady state is measured for PostgreSQL's load. */
const STEADY_MS = 30_000;

/** The open-file limit of a process on the machines this is measured on (not raisable). */
const FILE_LIMIT = 20_000;

/** Runs the scenario; stops its Control and simulators whatever happens. */
export async function measureWorkers(plan: WorkersPlan): Promise<WorkersResult> {
  const { workers, agents, say } = plan;
  const dir = join(plan.dir, `workers-${workers}`);
  await mkdir(dir, { recursive: true });
  // The embedded PostgreSQL's user (Control running as root) must pass through plan.dir.
  await chmod(plan.dir, 0o711);
  say(`--workers ${workers}: starting Control`);
  const control = await startBenchControl(
    dir,
    { timeouts: { heartbeatSeconds: plan.heartbeatSeconds ?? 10 }, policy: CAMPAIGN_POLICY },
    { AGENT_CONTROL_BENCH_ELD: "1", AGENT_CONTROL_RELEASE_PINS: plan.release.pin },
    ["--workers", String(workers)],
  );
  const sims: SimProcess[] = [];
  try {
    const target = await clusterTarget(control, workers);
    const empty = await target.memory();
    const simulators = Math.max(1, Math.ceil(agents / plan.agentsPerSimulator));
    say(`--workers ${workers}: ${agents} agents from ${simulators} simulators`);
    await startSimProcesses(
      sims,
      agents,
      simulators,
      (i, count) => ({
        server: target.server,
        joinToken: target.joinToken,
        count,
        seed: 100 + i,
        idPrefix: `w${i}`,
        connectRate: Math.max(1, Math.floor(plan.connectRate / simulators)),
        download: false,
        restartMs: [0, 0],
        pins: [plan.release.pin],
      }),
      (i) => join(dir, `sim-${i}.log`),
      true,
    );
    await waitWelcomed(sims, agents, plan.timeoutMs, `${agents} streams over ${workers} workers`);
    await sleep(5000);
    const held = await target.memory();
    const databaseUrl = await control.databaseUrl();
    const perWorker = await streamsPerHolder(databaseUrl);
    say(`--workers ${workers}: streams per worker ${perWorker.join(", ")}`);
    const meter = await openPgLoadMeter(databaseUrl);
    const pgLoad: Record<string, PgLoad> = {};
    let campaign: CampaignResult;
    try {
      const steady = await meter.window();
      await sleep(STEADY_MS);
      pgLoad["steady state"] = await steady.end();
      say(`--workers ${workers}: reconnect storm (every agent drops its stream)`);
      const storm = await meter.window();
      await Promise.all(sims.map((sim) => sim.drop()));
      await waitWelcomed(sims, agents, plan.timeoutMs, `${agents} agents back after the drop`);
      pgLoad["reconnect storm (drop to all welcomed)"] = await storm.end();
      await sleep(5000);
      const rolling = await meter.window();
      campaign = await rolloutOf(plan, control, target, sims, databaseUrl);
      pgLoad["rollout (the campaign scenarios)"] = await rolling.end();
    } finally {
      await meter.close();
    }
    return { ...workersRows(plan, { empty, held, perWorker, campaign }), pgLoad };
  } finally {
    await Promise.all(sims.map((sim) => sim.stop()));
    await control.stop();
  }
}

/** The campaign scenarios on the held fleet (none with `rollout: false`). */
async function rolloutOf(
  plan: WorkersPlan,
  control: BenchControl,
  target: Target,
  sims: readonly SimProcess[],
  databaseUrl: string,
): Promise<CampaignResult> {
  const { agents, say } = plan;
  return plan.rollout === false
    ? { rows: [], raw: {} }
    : await runCampaignScenarios({
        control,
        target,
        sims,
        fleet: agents,
        release: plan.release,
        databaseUrl,
        // Only for the ack-to-commit rows, which this scenario leaves to the single Control's.
        db: await measureDbBaseline(databaseUrl, 100, 20, 1),
        say,
      });
}

/**
 * Control under `--workers` as a measured target: memory is the sum over the primary and
 * every worker (each collects its garbage first), the event-loop delay the worst worker's.
 */
async function clusterTarget(control: BenchControl, workers: number): Promise<Target> {
  const names = ["control", ...Array.from({ length: workers }, (_, i) => `control-w${i + 1}`)];
  const pids = await Promise.all(names.map((name) => hookPid(control.dir, name)));
  const joinToken = await control.joinToken();
  const unsupported = async () => {
    throw new Error("the --workers scenario neither kills nor restarts its Control");
  };
  return {
    name: "control",
    server: control.agentAddr,
    joinToken,
    pid: () => control.pid(),
    async memory() {
      const all = await Promise.all(
        names.map((name, i) => memorySnapshot(control.dir, name, pids[i] as number)),
      );
      return sumSnapshots(all);
    },
    async eventLoopDelay() {
      const all = await Promise.all(
        names.map((name, i) => eventLoopDelay(control.dir, name, pids[i] as number)),
      );
      return worstDelay(all);
    },
    kill: unsupported,
    restart: unsupported,
  };
}

function sumSnapshots(all: readonly MemorySnapshot[]): MemorySnapshot {
  const sum = (read: (m: MemorySnapshot) => number) => all.reduce((n, m) => n + read(m), 0);
  const worst = worstDelay(all.map((m) => m.eld));
  return {
    rss: sum((m) => m.rss),
    heapTotal: sum((m) => m.heapTotal),
    heapUsed: sum((m) => m.heapUsed),
    external: sum((m) => m.external),
    arrayBuffers: sum((m) => m.arrayBuffers),
    vmRss: sum((m) => m.vmRss),
    ...(worst ? { eld: worst } : {}),
  };
}

/** The delay of the process whose p99 is the worst (undefined when none monitors it). */
function worstDelay(all: readonly (EventLoopDelay | undefined)[]): EventLoopDelay | undefined {
  return all.filter((eld) => eld !== undefined).sort((a, b) => b.p99 - a.p99)[0];
}

/** Online nodes per Control instance holding them, most first. */
async function streamsPerHolder(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      "select count(*) as n from nodes where online group by held_by order by count(*) desc",
    );
    return result.rows.map((r) => Number(r.n));
  } finally {
    await client.end();
  }
}

function workersRows(
  plan: WorkersPlan,
  m: {
    empty: MemorySnapshot;
    held: MemorySnapshot;
    perWorker: number[];
    campaign: CampaignResult;
  },
): Omit<WorkersResult, "pgLoad"> {
  const { workers, agents } = plan;
  const rssKb = (m.held.vmRss - m.empty.vmRss) / agents / 1024;
  const ratio = rssKb / plan.bare.rssKbPerStream;
  const busiest = m.perWorker[0] ?? 0;
  const prefix = `--workers ${workers}:`;
  const rows: BenchRow[] = [
    {
      scenario: `${prefix} memory per held stream, RSS after GC over all ${workers + 1} processes (bare server at ${plan.bare.streams.toLocaleString("en-US")} streams)`,
      n: agents,
      unit: "KB/stream",
      project: rssKb,
      baseline: plan.bare.rssKbPerStream,
      baselineName: "bare grpc-js",
      ratio,
      goal: "≤ 1.3×",
      met: ratio <= 1.3,
    },
    {
      scenario: `${prefix} streams held by the busiest worker (per worker: ${m.perWorker.join(", ")})`,
      n: agents,
      unit: "streams",
      project: busiest,
      baseline: Number.NaN,
      baselineName: "",
      ratio: Number.NaN,
      goal: `< ${FILE_LIMIT.toLocaleString("en-US")} (a process's file limit)`,
      met: busiest < FILE_LIMIT && m.perWorker.reduce((a, b) => a + b, 0) >= agents,
    },
    ...m.campaign.rows
      .filter((row) => !row.scenario.startsWith("ack-to-commit"))
      .map((row) => ({ ...row, scenario: `${prefix} ${row.scenario}` })),
  ];
  return {
    rows,
    raw: {
      workers,
      agents,
      empty: m.empty,
      held: m.held,
      perWorker: m.perWorker,
      ...m.campaign.raw,
    },
  };
}
