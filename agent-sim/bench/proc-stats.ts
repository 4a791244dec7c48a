/**
 * What the benchmark reads about a measured process from Linux's /proc, plus, through the
 * bench-only hook (gc-hook.mjs), a memory snapshot after a full GC and the event-loop delay
 * without one.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) the process has used so far, in seconds. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}

/**
 * CPU time the process's live threads have run so far, in seconds, to the nanosecond (the sum
 * of /proc/<pid>/task/<tid>/schedstat): for short windows, where the clock ticks of
 * {@link cpuSeconds} (10 ms each) would make a figure jump by whole ticks. Threads that exited
 * are not counted (a difference over a window must be read on threads that live through it,
 * as a Node.js server's do); falls back to {@link cpuSeconds} where schedstat is missing.
 */
export async function threadCpuSeconds(pid: number): Promise<number> {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const runs = await Promise.all(
    tids.map((tid) => readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").catch(() => "")),
  );
  if (runs.length === 0 || runs.every((r) => r === "")) return cpuSeconds(pid);
  return runs.reduce((sum, r) => sum + (Number(r.split(" ")[0]) || 0), 0) / 1e9;
}

/** Resident set size from /proc/<pid>/status, in bytes. */
export async function vmRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Open file descriptors of the process. */
export async function openFds(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

/** `process.memoryUsage()` of a measured process right after two full GCs. */
export interface MemorySnapshot {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** VmRSS read from /proc just after the GC. */
  readonly vmRss: number;
  /** Event-loop delay (ms) since the previous snapshot, when the hook monitors it. */
  readonly eld?: EventLoopDelay;
}

/** Event-loop delay percentiles (ms) over a window, from `monitorEventLoopDelay`. */
export interface EventLoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/**
 * Asks the process (running the GC hook with `name` under `dir`) to collect garbage and
 * report its memory; resolves with the report (rejects after 30 s).
 */
export async function memorySnapshot(
  dir: string,
  name: string,
  pid: number,
): Promise<MemorySnapshot> {
  // A delay request whose process died before it read it must not answer this signal.
  await rm(join(dir, `${name}.ask`), { force: true });
  const usage = await askHook<Omit<MemorySnapshot, "vmRss">>(dir, name, pid, "mem");
  return { ...usage, vmRss: await vmRssBytes(pid) };
}

/**
 * The process's event-loop delay since its previous snapshot or reading, which starts a new
 * window; no GC runs (a window's end may fall in the middle of what else is measured).
 * Undefined when the hook does not monitor the delay (`AGENT_CONTROL_BENCH_ELD`) or the window
 * held no sample (shorter than the sampler's 10 ms).
 */
export async function eventLoopDelay(
  dir: string,
  name: string,
  pid: number,
): Promise<EventLoopDelay | undefined> {
  const ask = join(dir, `${name}.ask`);
  await writeFile(ask, `eld ${pid}\n`);
  try {
    return (await askHook<{ eld?: EventLoopDelay }>(dir, name, pid, "eld")).eld;
  } finally {
    await rm(ask, { force: true });
  }
}

/** Signals the hook and waits up to 30 s for its `<name>.<kind>.json` report. */
async function askHook<T>(dir: string, name: string, pid: number, kind: string): Promise<T> {
  const file = join(dir, `${name}.${kind}.json`);
  await rm(file, { force: true });
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text !== undefined) return JSON.parse(text) as T;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${kind} report from ${name} (pid ${pid}) within 30 s`);
}

/** The pid the GC hook wrote for `name` under `dir` (waits up to 30 s for it). */
export async function hookPid(dir: string, name: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const text = await readFile(join(dir, `${name}.pid`), "utf8").catch(() => "");
    const pid = Number.parseInt(text, 10);
    if (pid > 0) return pid;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the GC hook of ${name} wrote no pid under ${dir}`);
}

/**
 * CPU seconds used by the process over `windowMs` of wall time, with the wall time it
 * really took (the measurement is a ratio, so the window need not be exact).
 */
export async function cpuOver(
  pid: number,
  windowMs: number,
): Promise<{ cpu: number; wallMs: number }> {
  const start = Date.now();
  const before = await cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, windowMs));
  const after = await cpuSeconds(pid);
  return { cpu: after - before, wallMs: Date.now() - start };
}
