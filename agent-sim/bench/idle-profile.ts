/**
 * A diagnosis tool behind the idle and heartbeat figures (not part of `npm run bench`): starts
 * Control as the quick benchmark does (same config; no agent, or `--agents N` heartbeating
 * from one simulator process at `--heartbeat-scale`, 0.1 as in the quick run), lets it
 * settle, then for `--seconds`
 * reads its CPU time from /proc and the database's committed transactions, and profiles it
 * with the V8 CPU profiler (through gc-hook.mjs); prints CPU ms per second, commits per
 * second and the self time of the hottest functions.
 *
 * Usage: `npx tsx agent-sim/bench/idle-profile.ts [--seconds 60] [--settle 10] [--eld] [--profile]
 *   [--save-to FILE] [--agents N] [--heartbeat-scale 0.1]`
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { FleetOptions } from "../fleet-options.js";
import { CAMPAIGN_POLICY } from "./campaign.js";
import { startBenchControl } from "./control.js";
import { dbCounters } from "./db-baseline.js";
import { MASS_ENROLMENT_LIMITS } from "./handshakes.js";
import { threadCpuSeconds as cpuSeconds } from "./proc-stats.js";
import { type SimProcess, sleep, startSimProcess, waitWelcomed } from "./processes.js";
import { printProfileSummary } from "./profile-summary.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "60" },
      settle: { type: "string", default: "10" },
      // The event-loop delay monitor the benchmark turns on in Control (AGENT_CONTROL_BENCH_ELD).
      eld: { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      "save-to": { type: "string" },
      // Control runs with --trace-gc; the collections in the window are counted from its log.
      "trace-gc": { type: "boolean", default: false },
      agents: { type: "string", default: "0" },
      "heartbeat-scale": { type: "string", default: "0.1" },
    },
    strict: true,
  });
  const seconds = Number(values.seconds);
  const dir = await mkdtemp(join(tmpdir(), "agent-control-idle-"));
  if (values.profile) process.env.AGENT_CONTROL_BENCH_PROFILE = "1";
  const nodeOptions = process.env.NODE_OPTIONS;
  if (values["trace-gc"]) {
    // --trace-gc is not allowed in NODE_OPTIONS; a preloaded module sets it instead.
    const hook = join(dir, "trace-gc.mjs");
    await writeFile(
      hook,
      'import { setFlagsFromString } from "node:v8";\nsetFlagsFromString("--trace-gc");\n',
    );
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(hook).href}`;
  }
  const control = await startBenchControl(
    dir,
    {
      timeouts: { heartbeatSeconds: 10 },
      policy: CAMPAIGN_POLICY,
      limits: MASS_ENROLMENT_LIMITS,
    },
    values.eld ? { AGENT_CONTROL_BENCH_ELD: "1" } : {},
  );
  // The simulator traces no collections (its stdout carries its replies).
  if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = nodeOptions;
  const sims: SimProcess[] = [];
  try {
    const url = await control.databaseUrl();
    const agents = Number(values.agents);
    if (agents > 0) {
      const fleet: FleetOptions = {
        server: control.agentAddr,
        joinToken: await control.joinToken(),
        count: agents,
        seed: 1,
        idPrefix: "idle",
        heartbeatScale: Number(values["heartbeat-scale"]),
        connectRate: 1000,
        download: false,
      };
      sims.push(await startSimProcess(fleet, join(dir, "sim.log")));
      await waitWelcomed(sims, agents, 120_000, `${agents} streams`);
    }
    await sleep(Number(values.settle) * 1000);
    if (values.profile) process.kill(control.pid(), "SIGWINCH");
    const logBefore = (await readFile(join(dir, "control.log"), "utf8")).length;
    const threadsBefore = await threads(control.pid());
    const cpuBefore = await cpuSeconds(control.pid());
    const dbBefore = await dbCounters(url);
    const start = performance.now();
    await sleep(seconds * 1000);
    const wall = (performance.now() - start) / 1000;
    const cpuAfter = await cpuSeconds(control.pid());
    const dbAfter = await dbCounters(url);
    const threadsAfter = await threads(control.pid());
    if (values.profile) process.kill(control.pid(), "SIGWINCH");
    process.stdout.write(
      `${agents > 0 ? `Control with ${agents} agents` : "idle Control"} over ${wall.toFixed(1)} s: ${((1000 * (cpuAfter - cpuBefore)) / wall).toFixed(2)} ms CPU/s, ` +
        `${((dbAfter.commits - dbBefore.commits) / wall).toFixed(2)} commits/s in the database (the readings' own included)\n`,
    );
    printThreads(threadsBefore, threadsAfter, wall);
    if (values["trace-gc"]) {
      const log = (await readFile(join(dir, "control.log"), "utf8")).slice(logBefore);
      const gcs = log.split("\n").filter((line) => /Scavenge|Mark-Compact|Mark-sweep/.test(line));
      process.stdout.write(`  ${gcs.length} collections in the window:\n`);
      for (const line of gcs.slice(0, 20)) process.stdout.write(`    ${line.trim()}\n`);
    }
    if (values.profile) {
      await sleep(2000);
      await printProfileSummary(
        join(dir, "control-1.cpuprofile"),
        `over ${seconds} s${agents > 0 ? ` with ${agents} agents` : " idle"}`,
      );
      if (values["save-to"]) await copyFile(join(dir, "control-1.cpuprofile"), values["save-to"]);
    }
  } finally {
    await Promise.all(sims.map((sim) => sim.stop()));
    await control.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One thread's run time (ns, /proc/…/schedstat: exact, not tick-sampled) and wake-ups. */
interface ThreadReading {
  readonly name: string;
  readonly ns: number;
  readonly wakeups: number;
}

async function threads(pid: number): Promise<Map<string, ThreadReading>> {
  const out = new Map<string, ThreadReading>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const base = `/proc/${pid}/task/${tid}`;
    const [comm, sched, status] = await Promise.all(
      ["comm", "schedstat", "status"].map((f) => readFile(`${base}/${f}`, "utf8").catch(() => "")),
    );
    if (!sched) continue;
    const name = tid === String(pid) ? "main thread" : (comm ?? "").trim();
    const wakeups = Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status ?? "")?.[1] ?? 0);
    out.set(tid, { name, ns: Number((sched ?? "").split(" ")[0]), wakeups });
  }
  return out;
}

/** Prints run time and wake-ups per second, summed per thread name. */
function printThreads(
  before: Map<string, ThreadReading>,
  after: Map<string, ThreadReading>,
  seconds: number,
): void {
  const byName = new Map<string, { ns: number; wakeups: number; threads: number }>();
  let total = 0;
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { ns: 0, wakeups: 0 };
    const entry = byName.get(a.name) ?? { ns: 0, wakeups: 0, threads: 0 };
    entry.ns += a.ns - b.ns;
    total += a.ns - b.ns;
    entry.wakeups += a.wakeups - b.wakeups;
    entry.threads += 1;
    byName.set(a.name, entry);
  }
  process.stdout.write(
    `  all threads: ${(total / 1e6 / seconds).toFixed(2)} ms run time/s (schedstat)\n`,
  );
  for (const [name, e] of [...byName].sort((x, y) => y[1].ns - x[1].ns)) {
    process.stdout.write(
      `  ${name.padEnd(16)} ×${String(e.threads).padEnd(2)} ${(e.ns / 1e6 / seconds).toFixed(2).padStart(6)} ms/s, ${(e.wakeups / seconds).toFixed(1).padStart(6)} wake-ups/s\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`idle-profile: ${String(error)}\n`);
  process.exitCode = 1;
});
