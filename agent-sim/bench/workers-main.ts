/**
 * `npm run bench:workers -- [--workers 2] [--agents 10000] [--bare-agents 10000]
 * [--connect-rate 1000] [--heartbeat-seconds 10] [--agents-per-simulator 10000] [--no-rollout]
 * [--out DIR] [--keep]`:
 * the `--workers` scenario of `npm run bench` on its own, sized for the machine it runs on
 * (on a 16-core machine: `--workers 16 --agents 100000`). The bare grpc-js server is
 * measured first in the same run, holding `--bare-agents` streams in its one process (keep
 * it under that process's open-file limit). Prints the table and PostgreSQL's load per phase
 * (`pg-load.ts`, the inputs of docs/CAPACITY.md) and writes `benchmarks-workers.json` into
 * `--out` (default: the work directory).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { prepareRelease } from "./campaign-release.js";
import { pgLoadTable } from "./pg-load.js";
import { type SimProcess, sleep, startSimProcesses, waitWelcomed } from "./processes.js";
import { markdownTable } from "./report.js";
import { bareTarget } from "./target.js";
import { measureWorkers } from "./workers.js";

const T0 = Date.now();
const say = (text: string) =>
  process.stdout.write(`bench ${((Date.now() - T0) / 1000).toFixed(1).padStart(6)} s: ${text}\n`);

/** Agents per simulator process by default: well under a process's 20,000 open files. */
const AGENTS_PER_SIMULATOR = 10_000;

/** RSS per held stream (KB) of the bare server holding `agents` streams. */
async function bareRssPerStream(dir: string, agents: number, connectRate: number) {
  const bare = await bareTarget(dir, 10_000);
  const sims: SimProcess[] = [];
  try {
    const empty = await bare.memory();
    const simulators = Math.ceil(agents / AGENTS_PER_SIMULATOR);
    await startSimProcesses(
      sims,
      agents,
      simulators,
      (i, count) => ({
        server: bare.server,
        joinToken: bare.joinToken,
        count,
        seed: 200 + i,
        idPrefix: `b${i}`,
        connectRate: Math.max(1, Math.floor(connectRate / simulators)),
        download: false,
      }),
      (i) => join(dir, `bare-sim-${i}.log`),
    );
    await waitWelcomed(sims, agents, 600_000, `${agents} bare streams`);
    await sleep(5000);
    const held = await bare.memory();
    return (held.vmRss - empty.vmRss) / agents / 1024;
  } finally {
    await Promise.all(sims.map((sim) => sim.stop()));
    await bare.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workers: { type: "string", default: "2" },
      agents: { type: "string", default: "10000" },
      "bare-agents": { type: "string", default: "10000" },
      "connect-rate": { type: "string", default: "1000" },
      "heartbeat-seconds": { type: "string", default: "10" },
      // Fewer, larger simulators where cores are few (each under 20,000 open files).
      "agents-per-simulator": { type: "string", default: String(AGENTS_PER_SIMULATOR) },
      // Hold the fleet and measure memory only (no campaign on it).
      "no-rollout": { type: "boolean", default: false },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
    },
    strict: true,
  });
  const workers = Number(values.workers);
  const agents = Number(values.agents);
  const bareAgents = Number(values["bare-agents"]);
  const connectRate = Number(values["connect-rate"]);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-workers-"));
  say(`work dir ${dir}`);
  try {
    const release = await prepareRelease(dir, "2.0.0");
    say(`bare server: ${bareAgents} streams`);
    const rssKbPerStream = await bareRssPerStream(dir, bareAgents, connectRate);
    const result = await measureWorkers({
      workers,
      agents,
      agentsPerSimulator: Number(values["agents-per-simulator"]),
      connectRate,
      timeoutMs: 900_000,
      heartbeatSeconds: Number(values["heartbeat-seconds"]),
      rollout: !values["no-rollout"],
      release,
      bare: { rssKbPerStream, streams: bareAgents },
      dir,
      say,
    });
    process.stdout.write(
      `\n${markdownTable(result.rows)}\n\n${pgLoadTable(agents, result.pgLoad)}\n`,
    );
    const out = values.out ?? dir;
    await mkdir(out, { recursive: true });
    await writeFile(
      join(out, "benchmarks-workers.json"),
      `${JSON.stringify({ startedAt: new Date(T0).toISOString(), rows: result.rows, pgLoad: result.pgLoad, raw: result.raw }, null, 2)}\n`,
    );
  } finally {
    if (values.keep || values.out === undefined) say(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:workers: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
