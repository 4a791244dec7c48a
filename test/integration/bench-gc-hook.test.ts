/**
 * The benchmark's hook in a measured process (`agent-sim/bench/gc-hook.mjs`): a memory
 * snapshot runs full collections, a reading of the event-loop delay alone runs none. The
 * fan-out's delay window ends while the rollout and its reports go on, so a collection there
 * would stop the very process whose rollout and ack-to-commit are measured next.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
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

/** Starts the measured process under the hook; resolves with its pid and how to stop it. */
async function startMeasured() {
  dir = await mkdtemp(join(tmpdir(), "bench-hook-"));
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
    const first = await eventLoopDelay(dir, "probe", measured.pid);
    const second = await eventLoopDelay(dir, "probe", measured.pid);
    for (const eld of [first, second]) {
      expect(eld?.p99).toBeGreaterThan(0);
      expect(eld?.max).toBeGreaterThanOrEqual(eld?.p99 ?? Number.POSITIVE_INFINITY);
    }
    // No memory report was asked for, and the request file is gone.
    expect((await readdir(dir)).sort()).toEqual(["probe.eld.json", "probe.pid"]);
    expect(await measured.majorCollections()).toBe(0);
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
