/**
 * The benchmark's hook in a measured process (`agent-sim/bench/gc-hook.mjs`): a memory
 * snapshot runs full collections, a reading of the event-loop delay alone runs none. The
 * fan-out's delay window ends while the rollout and its reports go on, so a collection there
 * would stop the very process whose rollout and ack-to-commit are measured next. A delay
 * request that no process read (its process died) never answers a later memory snapshot, and
 * a window with no sample reads as no delay, not as a made-up one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventLoopDelay, hookPid, memorySnapshot } from "../../agent-sim/bench/proc-stats.js";
import { GC_HOOK, gcHookEnv } from "../../agent-sim/bench/processes.js";

/** Counts the major collections of its own process; prints the count on SIGTERM. */
const MEASURED = `
import { constants, PerformanceObserver } from "node:perf_hooks";
let majors = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
}).observe({ entryTypes: ["gc"] });
process.on("SIGTERM", () => setTimeout(() => { process.stdout.write(String(majors)); process.exit(0); }, 200));
setInterval(() => {}, 1000);
`;

let dir = "";
let child: ChildProcess | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the measured process under the hook (in a new directory, or in `into` as a restart of
 * the same target); resolves with its pid and how to stop it.
 */
async function startMeasured(into?: string) {
  if (into === undefined) dir = await mkdtemp(join(tmpdir(), "bench-hook-"));
  else await rm(join(dir, "probe.pid"), { force: true });
  const started = spawn(
    process.execPath,
    ["--import", GC_HOOK, "--input-type=module", "-e", MEASURED],
    {
      env: { ...process.env, ...gcHookEnv(dir, "probe"), AGENT_CONTROL_BENCH_ELD: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  child = started;
  let out = "";
  started.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<void>((r) => started.once("exit", () => r()));
  const pid = await hookPid(dir, "probe");
  return {
    pid,
    exited,
    kill: () => started.kill("SIGKILL"),
    /** Stops it and returns how many major collections it saw. */
    async majorCollections(): Promise<number> {
      started.kill("SIGTERM");
      await exited;
      return Number.parseInt(out, 10);
    },
  };
}

describe("the benchmark's hook in a measured process", () => {
  it("reads the event-loop delay without a collection and starts a new window", async () => {
    const measured = await startMeasured();
    // Each window longer than the sampler's 10 ms resolution, so it holds samples.
    await sleep(50);
    const first = await eventLoopDelay(dir, "probe", measured.pid);
    await sleep(50);
    const second = await eventLoopDelay(dir, "probe", measured.pid);
    for (const eld of [first, second]) {
      expect(eld?.p99).toBeGreaterThan(0);
      expect(eld?.max).toBeGreaterThanOrEqual(eld?.p99 ?? Number.POSITIVE_INFINITY);
    }
    // No memory report was asked for, and the request file is gone.
    expect((await readdir(dir)).sort()).toEqual(["probe.eld.json", "probe.pid"]);
    expect(await measured.majorCollections()).toBe(0);
  });

  it("reads no delay from a window too short to hold a sample", async () => {
    const measured = await startMeasured();
    await sleep(50);
    await eventLoopDelay(dir, "probe", measured.pid);
    // The hook answers at once: no 10 ms sample fell in between.
    const readings = [];
    for (let i = 0; i < 5; i++) readings.push(await eventLoopDelay(dir, "probe", measured.pid));
    for (const eld of readings) if (eld !== undefined) expect(eld.max).toBeGreaterThan(0);
  });

  it("answers a memory snapshot after a delay request that reached no process", async () => {
    const dead = await startMeasured();
    dead.kill();
    await dead.exited;
    // The request is written, the signal fails: nothing may be left to answer later.
    await expect(eventLoopDelay(dir, "probe", dead.pid)).rejects.toThrow();
    const measured = await startMeasured(dir);
    const snapshot = await memorySnapshot(dir, "probe", measured.pid);
    expect(snapshot.heapUsed).toBeGreaterThan(0);
    expect(await measured.majorCollections()).toBeGreaterThanOrEqual(2);
  });

  it("answers a memory snapshot, not a delay read, when a stale request names another process", async () => {
    const measured = await startMeasured();
    // Left by a process that died after writing it and before its signal was sent.
    await writeFile(join(dir, "probe.ask"), "eld 1\n");
    const snapshot = await memorySnapshot(dir, "probe", measured.pid);
    expect(snapshot.vmRss).toBeGreaterThan(0);
    expect(await measured.majorCollections()).toBeGreaterThanOrEqual(2);
  });

  it("collects garbage for a memory snapshot", async () => {
    const measured = await startMeasured();
    const snapshot = await memorySnapshot(dir, "probe", measured.pid);
    expect(snapshot.heapUsed).toBeGreaterThan(0);
    expect(snapshot.vmRss).toBeGreaterThan(0);
    expect(snapshot.eld?.p99).toBeGreaterThan(0);
    expect(await measured.majorCollections()).toBeGreaterThanOrEqual(2);
  });
});
