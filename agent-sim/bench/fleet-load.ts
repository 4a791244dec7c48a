/**
 * Fleet scenarios against one target (Control or the bare baseline): memory held per
 * stream at growing fleet sizes, CPU per heartbeat at steady state, then a reconnect
 * storm. The fleet grows by adding simulator processes, so earlier streams stay open.
 */
import { join } from "node:path";
import type { FleetOptions } from "../fleet-options.js";
import { type MemorySnapshot, openFds, threadCpuSeconds } from "./proc-stats.js";
import { type SimProcess, sleep, startSimProcess, waitWelcomed } from "./processes.js";
import { median } from "./stats.js";
import { type StormResult, storm } from "./storm.js";
import type { Target } from "./target.js";

/** How a fleet scenario runs. */
export interface FleetLoadPlan {
  /** Fleet sizes at which memory is read (ascending). */
  readonly levels: readonly number[];
  /** Multiplies the welcomed heartbeat interval (quick mode beats faster). */
  readonly heartbeatScale: number;
  /** Wait after the fleet is welcomed before reading memory. */
  readonly settleMs: number;
  /** CPU windows at the largest level. */
  readonly cpuWindows: number;
  readonly cpuWindowMs: number;
  /** Storm repeats at the largest level (0: none). */
  readonly storms: number;
  /** Downtime imposed before the restart (default: as long as the restart takes). */
  readonly stormDowntimeMs?: number;
  /** New connections per second the simulators may open while growing. */
  readonly connectRate: number;
  /** Ceiling on waiting for a level to be welcomed. */
  readonly levelTimeoutMs: number;
  readonly logDir: string;
  /** More simulator options (release pins, restart delays for campaigns). */
  readonly simOptions?: Partial<FleetOptions>;
  /** Simulators note offers and reports (for the campaign scenarios). */
  readonly instrument?: boolean;
}

/** Hooks of {@link runFleetLoad}. */
export interface FleetLoadHooks {
  readonly onStep: (what: string) => void;
  readonly beforeCpu?: () => Promise<void>;
  readonly afterCpu?: () => Promise<void>;
  /** Runs with the whole fleet still held, after the storms. */
  readonly whileHeld?: (sims: readonly SimProcess[], held: number) => Promise<void>;
}

/** A memory reading with the number of streams held. */
export interface MemoryPoint {
  readonly streams: number;
  /** The median of the readings taken at this level. */
  readonly memory: MemorySnapshot;
  /** Each reading's VmRSS and heapUsed+external (bytes): the spread behind the medians. */
  readonly samples?: { readonly vmRss: readonly number[]; readonly heap: readonly number[] };
  readonly fds: number;
}

/** A CPU window at steady state. */
export interface CpuWindow {
  readonly cpuSeconds: number;
  readonly wallMs: number;
  readonly heartbeats: number;
}

/** What one target showed. */
export interface FleetLoadResult {
  readonly target: "control" | "bare";
  readonly points: readonly MemoryPoint[];
  readonly idleCpuPerSecond: number;
  readonly cpu: readonly CpuWindow[];
  readonly storms: readonly StormResult[];
}

/** Runs the fleet scenarios against `target`; every simulator is stopped at the end. */
export async function runFleetLoad(
  target: Target,
  plan: FleetLoadPlan,
  hooks: FleetLoadHooks,
): Promise<FleetLoadResult> {
  const { onStep, beforeCpu, afterCpu } = hooks;
  const sims: SimProcess[] = [];
  const points: MemoryPoint[] = [];
  try {
    await sleep(plan.settleMs);
    points.push(await reading(target, 0));
    const idle = await cpuPerSecond(target.pid(), Math.min(plan.cpuWindowMs / 2, 5000));
    let held = 0;
    for (const [index, level] of plan.levels.entries()) {
      const count = level - held;
      onStep(`${target.name}: growing to ${level} streams`);
      const options: FleetOptions = {
        server: target.server,
        joinToken: target.joinToken,
        count,
        seed: index + 1,
        idPrefix: `${target.name}${index}`,
        heartbeatScale: plan.heartbeatScale,
        connectRate: plan.connectRate,
        download: false,
        ...plan.simOptions,
      };
      const log = join(plan.logDir, `sim-${target.name}-${index}.log`);
      sims.push(await startSimProcess(options, log, plan.instrument));
      held = level;
      await waitWelcomed(sims, held, plan.levelTimeoutMs, `${held} streams on ${target.name}`);
      onStep(`${target.name}: ${held} streams welcomed; settling`);
      await sleep(plan.settleMs);
      points.push(await reading(target, held));
    }
    onStep(`${target.name}: CPU at steady state with ${held} streams`);
    await beforeCpu?.();
    const cpu: CpuWindow[] = [];
    for (let i = 0; i < plan.cpuWindows; i++)
      cpu.push(await cpuWindow(target.pid(), sims, plan.cpuWindowMs));
    await afterCpu?.();
    const storms: StormResult[] = [];
    for (let i = 0; i < plan.storms; i++) {
      onStep(`${target.name}: reconnect storm ${i + 1}/${plan.storms} of ${held} agents`);
      storms.push(await storm(target, sims, held, plan.stormDowntimeMs, plan.levelTimeoutMs));
      await sleep(plan.settleMs);
    }
    await hooks.whileHeld?.(sims, held);
    return { target: target.name, points, idleCpuPerSecond: idle, cpu, storms };
  } finally {
    await Promise.all(sims.map((sim) => sim.stop()));
  }
}

async function reading(target: Target, streams: number): Promise<MemoryPoint> {
  const snapshots: MemorySnapshot[] = [];
  for (let i = 0; i < 3; i++) {
    snapshots.push(await target.memory());
    await sleep(500);
  }
  const pick = (key: Exclude<keyof MemorySnapshot, "eld">) => median(snapshots.map((s) => s[key]));
  return {
    streams,
    fds: await openFds(target.pid()),
    samples: {
      vmRss: snapshots.map((s) => s.vmRss),
      heap: snapshots.map((s) => s.heapUsed + s.external),
    },
    memory: {
      rss: pick("rss"),
      heapTotal: pick("heapTotal"),
      heapUsed: pick("heapUsed"),
      external: pick("external"),
      arrayBuffers: pick("arrayBuffers"),
      vmRss: pick("vmRss"),
    },
  };
}

async function cpuPerSecond(pid: number, windowMs: number): Promise<number> {
  const start = performance.now();
  const before = await threadCpuSeconds(pid);
  await sleep(windowMs);
  return ((await threadCpuSeconds(pid)) - before) / ((performance.now() - start) / 1000);
}

async function cpuWindow(
  pid: number,
  sims: readonly SimProcess[],
  windowMs: number,
): Promise<CpuWindow> {
  const beats = async () =>
    (await Promise.all(sims.map((sim) => sim.counts()))).reduce((n, c) => n + c.heartbeats, 0);
  const start = performance.now();
  const [cpuBefore, beatsBefore] = [await threadCpuSeconds(pid), await beats()];
  await sleep(windowMs);
  const [cpuAfter, beatsAfter] = [await threadCpuSeconds(pid), await beats()];
  return {
    cpuSeconds: cpuAfter - cpuBefore,
    wallMs: performance.now() - start,
    heartbeats: beatsAfter - beatsBefore,
  };
}
