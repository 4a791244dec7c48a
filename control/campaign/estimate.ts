/**
 * How long a campaign will take, estimated from its plan and spec before it starts: each
 * batch lasts at least its minimum duration, its nodes go in rounds of the slots it has
 * (concurrency and each pool's disruption budget), each round takes from no time (nodes back
 * at once) to the whole reconnect timeout, plus the config grace, then the soak; batches run
 * one after another, and only time inside the maintenance windows counts. Without failures,
 * gates' answers or other campaigns' load on the pools (those only lengthen it). Pure.
 */
import { concurrencyLimit, poolLimit } from "./batch-rules.js";
import type { Plan } from "./plan.js";
import type { CampaignSpec } from "./spec.js";
import { type MaintenanceWindow, nextWindowChange, windowOpen } from "./windows.js";

/** The estimate of one batch: its upgraded nodes, rounds, and shortest and longest time. */
export interface BatchEstimate {
  readonly index: number;
  /** Nodes that will be offered (neither skipped nor already on the target). */
  readonly nodes: number;
  /** Rounds of offers its slots allow. */
  readonly rounds: number;
  /** Time that counts (inside windows), shortest and longest. */
  readonly minMs: number;
  readonly maxMs: number;
}

/** The estimate of a campaign started at `startAt`. */
export interface CampaignEstimate {
  readonly batches: readonly BatchEstimate[];
  /** When it ends at the earliest and at the latest (epoch ms), windows included. */
  readonly earliestEndAt: number;
  readonly latestEndAt: number;
}

/**
 * The instant at which `ms` of open time has passed after `t` (a closed window first waits for
 * its opening); `t + ms` without windows. 0 ms from a closed window is its next opening.
 */
export function afterOpenTime(
  windows: readonly MaintenanceWindow[] | undefined,
  t: number,
  ms: number,
): number {
  if (windows === undefined || windows.length === 0) return t + ms;
  let at = t;
  let left = ms;
  for (let guard = 0; guard < 100_000; guard++) {
    const change = nextWindowChange(windows, at);
    if (!windowOpen(windows, at)) {
      if (change === undefined) return Number.POSITIVE_INFINITY;
      at = change;
      continue;
    }
    if (change === undefined || at + left <= change) return at + left;
    left -= change - at;
    at = change;
  }
  return Number.POSITIVE_INFINITY;
}

/** The estimate of `plan` under `spec`, started at `startAt` (see the file's TSDoc). */
export function estimateCampaign(
  spec: CampaignSpec,
  plan: Plan,
  startAt: number,
): CampaignEstimate {
  const done = new Set([...plan.unsupportedNodeIds, ...plan.upToDateNodeIds]);
  const poolSizes = new Map<string, number>();
  const byBatch = new Map<number, Plan["nodes"][number][]>();
  for (const n of plan.nodes) {
    poolSizes.set(n.pool, (poolSizes.get(n.pool) ?? 0) + 1);
    if (done.has(n.nodeId)) continue;
    const list = byBatch.get(n.batch);
    if (list === undefined) byBatch.set(n.batch, [n]);
    else list.push(n);
  }
  const batches: BatchEstimate[] = [];
  let earliest = startAt;
  let latest = startAt;
  for (const b of plan.batches) {
    const offered = byBatch.get(b.index) ?? [];
    const pools = new Set(offered.map((n) => n.pool));
    let poolSlots = 0;
    for (const p of pools)
      poolSlots += poolLimit(poolSizes.get(p) ?? 0, spec.disruptionBudgetPercent);
    const slots = Math.min(concurrencyLimit(spec.concurrency), poolSlots);
    const rounds = offered.length === 0 ? 0 : Math.ceil(offered.length / slots);
    const fast = rounds * spec.configGraceMs + spec.soakMs;
    const slow = rounds * (spec.reconnectTimeoutMs + spec.configGraceMs) + spec.soakMs;
    const minMs = Math.max(b.minDurationMs, fast);
    const maxMs = Math.max(b.minDurationMs, slow);
    batches.push({ index: b.index, nodes: offered.length, rounds, minMs, maxMs });
    earliest = afterOpenTime(spec.windows, earliest, minMs);
    latest = afterOpenTime(spec.windows, latest, maxMs);
  }
  return { batches, earliestEndAt: earliest, latestEndAt: latest };
}
