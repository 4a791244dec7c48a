/**
 * The benchmark's table: one row per figure, with the baseline measured in the same run,
 * the ratio, the goal and, for `--quick`, the bound beyond which the run fails.
 */
import type { DbBaseline } from "./db-baseline.js";
import type { FleetLoadResult, MemoryPoint } from "./fleet-load.js";
import { median, ratio, type Spread, slope, spreadOf, unpairedRatioSpread } from "./stats.js";

/** One figure of the table. */
export interface BenchRow {
  readonly scenario: string;
  readonly n: number;
  readonly unit: string;
  /** Control's figure (NaN when pending). */
  readonly project: number;
  /** The baseline's figure (NaN when there is none). */
  readonly baseline: number;
  readonly baselineName: string;
  /** project / baseline (NaN when there is no baseline). */
  readonly ratio: number;
  readonly goal: string;
  /** Whether the goal is met (undefined: no goal or pending). */
  readonly met: boolean | undefined;
  /** Quick mode fails when `ratio` exceeds this. */
  readonly maxRatio?: number;
  /** Quick mode fails when `ratio` is below this (figures where more is better). */
  readonly minRatio?: number;
  /** Quick mode fails when `project` (a dimensionless figure) exceeds this. */
  readonly maxValue?: number;
  readonly note?: string;
  /**
   * The range over the row's repeats of the figure it is judged by: the ratio, or the
   * project's figure for a row bounded by `maxValue`. Absent: not measured.
   */
  readonly spread?: Spread;
  /** Why the row has no figure yet. */
  readonly pending?: string;
}

const KB = 1024;

/** Memory per stream (KB) between the empty reading and the one at `level` (NaN without them). */
export function perStream(
  points: readonly MemoryPoint[],
  level: number,
  read: (p: MemoryPoint) => number,
): number {
  const zero = points.find((p) => p.streams === 0);
  const at = points.find((p) => p.streams === level);
  if (!zero || !at || level === 0) return Number.NaN;
  return (read(at) - read(zero)) / level / KB;
}

/**
 * Memory per stream (KB) between the empty reading and the one at `level` for every pairing
 * of their repeated readings (empty when the readings are missing).
 */
export function perStreamSamples(
  points: readonly MemoryPoint[],
  level: number,
  key: "vmRss" | "heap",
): number[] {
  const zero = points.find((p) => p.streams === 0)?.samples?.[key] ?? [];
  const at = points.find((p) => p.streams === level)?.samples?.[key] ?? [];
  if (level === 0) return [];
  return at.flatMap((a) => zero.map((z) => (a - z) / level / KB));
}

function readingsAt(points: readonly MemoryPoint[], level: number): number {
  return points.find((p) => p.streams === level)?.samples?.vmRss.length ?? 0;
}

/** How a mode bounds the reconnect storm (each absent: the row is reported, not bounded). */
export interface StormBounds {
  /** Control's time from serving again to every agent welcomed, ÷ the bare server's. */
  readonly stormReadyToAll?: number;
  /** The storm's peak-to-mean welcome rate (the agents' backoff shapes it). */
  readonly stormPeakToMean?: number;
}

/** Rows of the memory, heartbeat and storm scenarios. */
export function fleetRows(
  control: FleetLoadResult,
  bare: FleetLoadResult,
  bounds: StormBounds & { memory: number; cpu: number },
): BenchRow[] {
  const rows: BenchRow[] = [];
  const rss = (p: MemoryPoint) => p.memory.vmRss;
  const heap = (p: MemoryPoint) => p.memory.heapUsed + p.memory.external;
  const levels = control.points.map((p) => p.streams).filter((n) => n > 0);
  for (const [name, read, key] of [
    ["memory per held stream: RSS after GC", rss, "vmRss"],
    ["memory per held stream: heapUsed+external after GC", heap, "heap"],
  ] as const) {
    for (const level of levels) {
      const project = perStream(control.points, level, read);
      const baseline = perStream(bare.points, level, read);
      const r = ratio(project, baseline);
      rows.push({
        scenario: name,
        n: level,
        unit: "KB/stream",
        project,
        baseline,
        baselineName: "bare grpc-js",
        ratio: r,
        goal: "≤ 1.3×",
        met: r <= 1.3,
        maxRatio: bounds.memory,
        spread: {
          ...unpairedRatioSpread(
            perStreamSamples(control.points, level, key),
            perStreamSamples(bare.points, level, key),
          ),
          // Repeated readings per level, not their pairings.
          runs: Math.min(readingsAt(control.points, level), readingsAt(bare.points, level)),
        },
      });
    }
    if (levels.length > 1) {
      // Least-squares over every level (0 included): fixed costs fall out of the slope.
      const perStreamSlope = (points: readonly MemoryPoint[]) =>
        slope(points.map((p) => [p.streams, read(p)] as const)) / KB;
      const project = perStreamSlope(control.points);
      const baseline = perStreamSlope(bare.points);
      const r = ratio(project, baseline);
      rows.push({
        scenario: `${name} (least-squares slope over 0–${levels.at(-1)})`,
        n: levels.at(-1) ?? 0,
        unit: "KB/stream",
        project,
        baseline,
        baselineName: "bare grpc-js",
        ratio: r,
        goal: "≤ 1.3×",
        met: r <= 1.3,
      });
    }
  }
  const perBeat = (w: FleetLoadResult["cpu"]) =>
    w.map((x) => (x.cpuSeconds * 1e6) / Math.max(1, x.heartbeats));
  // Over every window together, not the median window: a major collection comes every
  // 15–25 s and costs 100–200 ms of CPU, so a 6 s window holds one or not; the total counts
  // each as often as it came, as an operator's bill would.
  const micros = (w: FleetLoadResult["cpu"]) =>
    (w.reduce((s, x) => s + x.cpuSeconds, 0) * 1e6) /
    Math.max(
      1,
      w.reduce((s, x) => s + x.heartbeats, 0),
    );
  const rate = (w: FleetLoadResult["cpu"]) =>
    median(w.map((x) => x.heartbeats / (x.wallMs / 1000)));
  const top = levels.at(-1) ?? 0;
  const cpuProject = micros(control.cpu);
  const cpuBaseline = micros(bare.cpu);
  const cpuRatio = ratio(cpuProject, cpuBaseline);
  rows.push({
    scenario: "heartbeat CPU at steady state (CPU per heartbeat, all windows together)",
    n: top,
    unit: "µs CPU/heartbeat",
    project: cpuProject,
    baseline: cpuBaseline,
    baselineName: "bare grpc-js",
    ratio: cpuRatio,
    goal: "≤ 1.5×",
    met: cpuRatio <= 1.5,
    maxRatio: bounds.cpu,
    spread: unpairedRatioSpread(perBeat(control.cpu), perBeat(bare.cpu)),
    note: `${Math.round(rate(control.cpu))} vs ${Math.round(rate(bare.cpu))} heartbeats/s`,
  });
  const cs = control.storms;
  const bs = bare.storms;
  if (cs.length > 0) {
    const killToAll = median(cs.map((s) => s.killToAllMs)) / 1000;
    rows.push({
      scenario: "reconnect storm: SIGKILL → every agent online again",
      n: top,
      unit: "s",
      project: killToAll,
      baseline: median(bs.map((s) => s.killToAllMs)) / 1000,
      baselineName: "bare grpc-js, same downtime",
      ratio: ratio(killToAll, median(bs.map((s) => s.killToAllMs)) / 1000),
      goal: "≤ 60 s",
      met: killToAll <= 60,
      note: `restart took ${(median(cs.map((s) => s.downtimeMs)) / 1000).toFixed(1)} s; ready → all ${(median(cs.map((s) => s.readyToAllMs)) / 1000).toFixed(1)} s`,
    });
    const readyToAll = (s: FleetLoadResult["storms"][number]) => s.readyToAllMs / 1000;
    const serving = median(cs.map(readyToAll));
    const bareServing = median(bs.map(readyToAll));
    const servingRatio = ratio(serving, bareServing);
    const servingBound = bounds.stormReadyToAll;
    rows.push({
      scenario: "reconnect storm: serving again → every agent online again",
      n: top,
      unit: "s",
      project: serving,
      baseline: bareServing,
      baselineName: "bare grpc-js, same downtime",
      ratio: servingRatio,
      goal: servingBound === undefined ? "reported" : `≤ ${servingBound}×`,
      met: servingBound === undefined ? undefined : servingRatio <= servingBound,
      ...(servingBound === undefined ? {} : { maxRatio: servingBound }),
      spread: unpairedRatioSpread(cs.map(readyToAll), bs.map(readyToAll)),
    });
    const ptm = (s: FleetLoadResult["storms"]) =>
      median(s.map((x) => ratio(x.peakPerSecond, x.meanPerSecond)));
    const ptmBound = bounds.stormPeakToMean;
    rows.push({
      scenario: "reconnect storm: peak-to-mean connection rate",
      n: top,
      unit: "peak/mean",
      project: ptm(cs),
      baseline: ptm(bs),
      baselineName: "bare grpc-js, same downtime",
      ratio: ratio(ptm(cs), ptm(bs)),
      goal: ptmBound === undefined ? "reported (the agents' backoff)" : `≤ ${ptmBound}×`,
      met: ptmBound === undefined ? undefined : ptm(cs) <= ptmBound,
      ...(ptmBound === undefined ? {} : { maxValue: ptmBound }),
      spread: spreadOf(cs.map((x) => ratio(x.peakPerSecond, x.meanPerSecond))),
      note: `peak ${Math.round(median(cs.map((s) => s.peakPerSecond)))}/s, mean ${Math.round(median(cs.map((s) => s.meanPerSecond)))}/s (welcomes)`,
    });
  }
  return rows;
}

/** The raw-SQL reference rows. */
export function dbRows(db: DbBaseline): BenchRow[] {
  const ref = (scenario: string, n: number, value: number): BenchRow => ({
    scenario,
    n,
    unit: "ms",
    project: Number.NaN,
    baseline: value,
    baselineName: "raw SQL",
    ratio: Number.NaN,
    goal: "reference",
    met: undefined,
  });
  return [
    ref("single-row autocommit UPDATE, p50", 1, db.singleUpdateP50Ms),
    ref("single-row autocommit UPDATE, p99", 1, db.singleUpdateP99Ms),
    ref("UPDATE … FROM unnest, median", db.unnestRows, db.unnestMedianMs),
  ];
}
