/**
 * What bounds a plan's duration estimate, in words an operator reads beside it (PlanCampaign's
 * `estimate_bounds`, `campaign plan`'s "Bounded by:" line): the slots (a pool's disruption
 * budget or the concurrency) that split batches into rounds, the config grace and the reconnect
 * timeout each round waits, the batches' minimum durations, the soak and the maintenance
 * windows. Pure; the same rules as `estimateCampaign`, which it only explains.
 */
import {
  type CampaignEstimate,
  type CampaignSpec,
  concurrencyLimit,
  formatLeft,
  type Plan,
  poolLimit,
} from "../campaign/index.js";

/** The slots of one batch and what sets them: the tightest pool's budget or the concurrency. */
interface BatchSlots {
  readonly rounds: number;
  readonly text: string;
}

function slotsOf(spec: CampaignSpec, plan: Plan, batch: number): BatchSlots | undefined {
  const done = new Set([...plan.unsupportedNodeIds, ...plan.upToDateNodeIds]);
  const poolSizes = new Map<string, number>();
  const offered = new Map<string, number>();
  for (const n of plan.nodes) {
    poolSizes.set(n.pool, (poolSizes.get(n.pool) ?? 0) + 1);
    if (n.batch === batch && !done.has(n.nodeId))
      offered.set(n.pool, (offered.get(n.pool) ?? 0) + 1);
  }
  let total = 0;
  let poolSlots = 0;
  // The pool whose offered nodes need the most rounds of its own slots.
  let tightest: { pool: string; slots: number; offered: number } | undefined;
  for (const [pool, count] of offered) {
    total += count;
    const size = poolSizes.get(pool) ?? 0;
    const slots = poolLimit(size, spec.disruptionBudgetPercent);
    poolSlots += slots;
    if (tightest === undefined || count / slots > tightest.offered / tightest.slots)
      tightest = { pool, slots, offered: count };
  }
  if (total === 0 || tightest === undefined) return undefined;
  const concurrency = concurrencyLimit(spec.concurrency);
  const slots = Math.min(concurrency, poolSlots);
  const rounds = Math.ceil(total / slots);
  if (rounds <= 1) return undefined;
  const text =
    concurrency < poolSlots
      ? `concurrency ${spec.concurrency}: ${rounds} rounds in batch ${batch + 1}`
      : `pool disruption budget ${spec.disruptionBudgetPercent} %: ${tightest.slots} of ${tightest.pool === "" ? "the nodes without a pool" : `pool ${tightest.pool}`} at once, ${rounds} rounds in batch ${batch + 1}`;
  return { rounds, text };
}

/**
 * What bounds `estimate` of `plan` under `spec`, most binding first; empty when no node would
 * be offered. Each entry is one phrase ("config grace 1 min per round").
 */
export function estimateBounds(
  spec: CampaignSpec,
  plan: Plan,
  estimate: CampaignEstimate,
): string[] {
  const active = estimate.batches.filter((b) => b.nodes > 0);
  if (active.length === 0) return [];
  const bounds: string[] = [];
  let widest: BatchSlots | undefined;
  for (const b of active) {
    const s = slotsOf(spec, plan, b.index);
    if (s !== undefined && (widest === undefined || s.rounds > widest.rounds)) widest = s;
  }
  if (widest !== undefined) bounds.push(widest.text);
  const rounds = active.reduce((n, b) => n + b.rounds, 0);
  if (spec.configGraceMs > 0)
    bounds.push(
      `config grace ${formatLeft(spec.configGraceMs)} per round (${rounds} round${rounds === 1 ? "" : "s"})`,
    );
  const minimumBound = plan.batches.some((p) => {
    const e = estimate.batches.find((b) => b.index === p.index);
    return e !== undefined && e.minMs === p.minDurationMs && p.minDurationMs > 0;
  });
  if (minimumBound) bounds.push("the batches' minimum durations");
  if (spec.soakMs > 0) bounds.push(`soak ${formatLeft(spec.soakMs)} per batch`);
  bounds.push(`reconnect timeout ${formatLeft(spec.reconnectTimeoutMs)} per round at the longest`);
  if (spec.windows !== undefined && spec.windows.length > 0)
    bounds.push("maintenance windows (only time inside them counts)");
  return bounds;
}
