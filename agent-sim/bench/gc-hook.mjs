/**
 * Benchmark-only hook, loaded into a measured process with `--import` through
 * NODE_OPTIONS (so Control itself carries no benchmark code). Inert unless
 * `AGENT_CONTROL_BENCH_GC=1`.
 *
 * When active, it writes the process id to `<AGENT_CONTROL_BENCH_DIR>/<name>.pid` (a
 * `node:cluster` worker's name gains `-w<worker id>`) and, on
 * every SIGUSR2, runs a full garbage collection twice and writes `process.memoryUsage()`
 * to `<dir>/<name>.mem.json` (atomically: temporary file, then rename). With
 * `AGENT_CONTROL_BENCH_SNAPSHOT=1` it also writes `<dir>/<name>-<n>.heapsnapshot` first
 * (see heap-profile.ts). With `AGENT_CONTROL_BENCH_PROFILE=1`, each SIGWINCH starts or stops
 * the V8 CPU profiler; stopping writes `<dir>/<name>-<n>.cpuprofile` (see cpu-profile.ts).
 * With `AGENT_CONTROL_BENCH_ELD=1`, the memory report also carries the event-loop delay
 * (`monitorEventLoopDelay`, ms) since the previous report, the GC it runs excluded (none when
 * the window held no sample). A SIGUSR2 that finds `<dir>/<name>.ask` holding `eld <its pid>`
 * (see proc-stats.ts) reads only that delay and starts a new window, into
 * `<dir>/<name>.eld.json`, with no GC: a window that ends in the middle of a measurement (the
 * fan-out's, which the rollout goes on from) must not stop the process for two full
 * collections. A request naming another pid (one left by a process that died) is dropped.
 *
 * Plain JavaScript on purpose: NODE_OPTIONS reaches tsx's launcher process too, which
 * has no TypeScript loader; the hook skips that launcher (its argv[1] is tsx's cli).
 */
import cluster from "node:cluster";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

const active =
  process.env.AGENT_CONTROL_BENCH_GC === "1" && !/tsx[\\/]dist[\\/]cli/.test(process.argv[1] ?? "");

if (active) {
  const dir = process.env.AGENT_CONTROL_BENCH_DIR ?? process.env.AGENT_CONTROL_DATA_DIR ?? ".";
  // A worker of `node:cluster` inherits its primary's environment, so its name gains its id.
  const worker = cluster.isWorker ? cluster.worker?.id : undefined;
  const name = `${process.env.AGENT_CONTROL_BENCH_NAME ?? "process"}${worker ? `-w${worker}` : ""}`;
  setFlagsFromString("--expose-gc");
  /** @type {() => void} */
  const gc = globalThis.gc ?? runInNewContext("gc");
  writeFileSync(join(dir, `${name}.pid`), `${process.pid}\n`);
  let snapshots = 0;
  const delay =
    process.env.AGENT_CONTROL_BENCH_ELD === "1"
      ? monitorEventLoopDelay({ resolution: 10 })
      : undefined;
  delay?.enable();
  /** Writes `value` as JSON to `<dir>/<file>` atomically (temporary file, then rename). */
  const report = (file, value) => {
    const path = join(dir, file);
    writeFileSync(`${path}.tmp`, JSON.stringify(value));
    renameSync(`${path}.tmp`, path);
  };
  const ask = join(dir, `${name}.ask`);
  /** @returns {string} what the bench asked for with this signal ("" for a memory report) */
  const asked = () => {
    try {
      const text = readFileSync(ask, "utf8").trim();
      rmSync(ask, { force: true });
      return text;
    } catch {
      return "";
    }
  };
  process.on("SIGUSR2", () => {
    const ms = (ns) => ns / 1e6;
    const eld =
      delay && delay.count > 0
        ? {
            p50: ms(delay.percentile(50)),
            p99: ms(delay.percentile(99)),
            max: ms(delay.max),
            count: delay.count,
          }
        : undefined;
    if (asked() === `eld ${process.pid}`) {
      delay?.reset();
      report(`${name}.eld.json`, { at: Date.now(), eld });
      return;
    }
    gc();
    gc();
    if (process.env.AGENT_CONTROL_BENCH_SNAPSHOT === "1") {
      snapshots += 1;
      writeHeapSnapshot(join(dir, `${name}-${snapshots}.heapsnapshot`));
    }
    delay?.reset();
    report(`${name}.mem.json`, { ...process.memoryUsage(), at: Date.now(), eld });
  });
  if (process.env.AGENT_CONTROL_BENCH_PROFILE === "1") {
    const session = new Session();
    session.connect();
    let profiling = false;
    let profiles = 0;
    process.on("SIGWINCH", () => {
      if (!profiling) {
        profiling = true;
        session.post("Profiler.enable", () => session.post("Profiler.start"));
        return;
      }
      profiling = false;
      session.post("Profiler.stop", (error, result) => {
        if (error) return;
        profiles += 1;
        writeFileSync(join(dir, `${name}-${profiles}.cpuprofile`), JSON.stringify(result.profile));
      });
    });
  }
}
