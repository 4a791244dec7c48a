/**
 * Reconnect storm: the target is killed with SIGKILL while a fleet holds streams to it,
 * started again, and the fleet's reconnections are timed and bucketed per second from
 * the simulators' side (welcomes counted every 200 ms).
 */
import { type SimProcess, sleep, waitWelcomed } from "./processes.js";
import type { SimCounts } from "./sim-runner.js";
import type { Target } from "./target.js";

/** One storm's figures. */
export interface StormResult {
  /** SIGKILL until the restarted server serves. */
  readonly downtimeMs: number;
  /** Restarted server serving until every agent is welcomed again. */
  readonly readyToAllMs: number;
  /** SIGKILL until every agent is welcomed again. */
  readonly killToAllMs: number;
  /** Welcomes in the busiest second. */
  readonly peakPerSecond: number;
  /** Welcomes per second averaged from the first to the last second with any. */
  readonly meanPerSecond: number;
  /** Streams the agents opened (successful or not) from the kill to the end. */
  readonly attempts: number;
}

/**
 * Kills `target`, waits `downtimeMs` from the kill (at least until it restarts), starts it
 * again and waits (at most `timeoutMs`) until `total` agents are welcomed.
 */
export async function storm(
  target: Target,
  sims: readonly SimProcess[],
  total: number,
  downtimeMs: number | undefined,
  timeoutMs: number,
): Promise<StormResult> {
  await Promise.all(sims.map((sim) => sim.traceStart(200)));
  const killAt = Date.now();
  await target.kill();
  const lostBy = Date.now() + 10_000;
  while (Date.now() < lostBy) {
    const counts = await Promise.all(sims.map((sim) => sim.counts()));
    if (counts.reduce((n, c) => n + c.welcomed, 0) === 0) break;
    await sleep(100);
  }
  if (downtimeMs !== undefined) await sleep(Math.max(0, killAt + downtimeMs - Date.now()));
  await target.restart();
  const readyAt = Date.now();
  await waitWelcomed(sims, total, timeoutMs, `${total} agents back on ${target.name}`);
  const allAt = Date.now();
  const traces = await Promise.all(sims.map((sim) => sim.traceStop()));
  const { peak, mean, attempts } = bucketWelcomes(traces, readyAt);
  return {
    downtimeMs: readyAt - killAt,
    readyToAllMs: allAt - readyAt,
    killToAllMs: allAt - killAt,
    peakPerSecond: peak,
    meanPerSecond: mean,
    attempts,
  };
}

/** Welcomes per one-second bucket (from `origin`), over every simulator's trace. */
export function bucketWelcomes(
  traces: readonly (readonly SimCounts[])[],
  origin: number,
): { peak: number; mean: number; attempts: number } {
  const buckets = new Map<number, number>();
  let attempts = 0;
  for (const samples of traces) {
    for (let i = 1; i < samples.length; i++) {
      const a = samples[i - 1] as SimCounts;
      const b = samples[i] as SimCounts;
      attempts += b.connects - a.connects;
      const welcomes = b.welcomes - a.welcomes;
      if (welcomes <= 0) continue;
      const second = Math.floor((b.at - origin) / 1000);
      buckets.set(second, (buckets.get(second) ?? 0) + welcomes);
    }
  }
  if (buckets.size === 0) return { peak: 0, mean: 0, attempts };
  const seconds = [...buckets.keys()];
  const first = Math.min(...seconds);
  const last = Math.max(...seconds);
  const sum = [...buckets.values()].reduce((n, v) => n + v, 0);
  return { peak: Math.max(...buckets.values()), mean: sum / (last - first + 1), attempts };
}
