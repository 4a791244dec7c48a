/**
 * What a campaign's current batch waits for, derived from the same records and rules the
 * engine decides on (`batch-rules.ts`, `gate-rules.ts`, `windows.ts`): a pure function of the
 * campaign, its nodes, the live facts, the gate results, the pool loads and `now`. It never
 * decides anything; it explains why the next decision would not yet pass the batch.
 */
import {
  concurrencyLimit,
  countedMs,
  inFlight,
  isSettled,
  poolLimit,
  soakedMs,
} from "./batch-rules.js";
import { downloadingAfter, downloadLimit } from "./download-budget.js";
import { countingResults } from "./gate-rules.js";
import { type GateResult, gateLabel } from "./gates.js";
import {
  type CampaignNode,
  type CampaignPhase,
  type CampaignState,
  isEndedPhase,
  isFinal,
  isUpgrading,
  type ObservedPhase,
  type PoolLoad,
} from "./model.js";
import { nextWindowChange, windowOpen } from "./windows.js";

/** Who paused the campaign, when and why (from its pause command), when known. */
export interface PauseInfo {
  readonly by: string;
  readonly at: number;
  readonly reason: string;
}

/** Everything {@link waitsFor} reads. */
export interface WaitsInput {
  readonly campaign: CampaignState;
  /** Every node of the campaign (only the current batch's are read). */
  readonly nodes: readonly CampaignNode[];
  readonly now: number;
  /**
   * Whether a node has a stream on some Control now; absent: every waiting node is taken as
   * connected (no liveness wait is reported).
   */
  readonly online?: ((nodeId: string) => boolean) | undefined;
  /** The current batch's stored gate results (`gates.ts`). */
  readonly gates?: readonly GateResult[] | undefined;
  /** The fleet-wide load of the campaign's pools, as the engine is given it. */
  readonly pools?: ReadonlyMap<string, PoolLoad> | undefined;
  /** The pause's actor, time and reason, when the campaign is paused and they are known. */
  readonly pause?: PauseInfo | undefined;
  /** When the deciding Control took the lead (gate results before it do not count). */
  readonly readyAt?: number | undefined;
  /**
   * The latest phase each node reported on its upgrade operation, by operation id (the
   * download budget reads it); absent, or an operation missing: no report (an offered or
   * applying node then counts as downloading, as the engine counts it).
   */
  readonly upgradePhases?: ReadonlyMap<string, ObservedPhase> | undefined;
}

/** One thing the current batch waits for. Times are epoch ms, durations ms. */
export type Wait =
  | { readonly kind: "ended"; readonly phase: CampaignPhase }
  | { readonly kind: "finishing"; readonly phase: CampaignPhase; readonly inFlight: number }
  | { readonly kind: "paused"; readonly by: string; readonly at: number; readonly reason: string }
  | { readonly kind: "rolling_back"; readonly pending: number }
  | {
      readonly kind: "window_closed";
      readonly opensAt: number | undefined;
      readonly timeZone: string;
    }
  | { readonly kind: "upgrading"; readonly count: number; readonly deadlineLeftMs: number }
  | { readonly kind: "verifying"; readonly count: number; readonly graceLeftMs: number }
  | { readonly kind: "concurrency"; readonly inFlight: number; readonly limit: number }
  /** `--max-downloads`: `downloading` of the campaign's nodes may be fetching the artifact. */
  | { readonly kind: "download_budget"; readonly downloading: number; readonly limit: number }
  | {
      readonly kind: "pool_budget";
      readonly pool: string;
      readonly inFlight: number;
      readonly limit: number;
    }
  | { readonly kind: "disconnected"; readonly count: number }
  | { readonly kind: "to_offer"; readonly count: number }
  /** Waiting nodes that answered DEFERRED: offered again in `nextOfferLeftMs` at the soonest. */
  | { readonly kind: "deferred"; readonly count: number; readonly nextOfferLeftMs: number }
  | { readonly kind: "min_duration"; readonly leftMs: number }
  | { readonly kind: "soak"; readonly leftMs: number }
  | { readonly kind: "gate_pending"; readonly label: string }
  | {
      readonly kind: "gate_unreachable";
      readonly label: string;
      readonly forMs: number;
      readonly graceMs: number;
      readonly value: string;
    }
  | {
      readonly kind: "gate_failing";
      readonly label: string;
      readonly value: string;
      readonly message: string;
    }
  | { readonly kind: "next_decision" };

/** Kinds of {@link Wait}. */
export type WaitKind = Wait["kind"];

const positive = (ms: number): number => Math.max(0, ms);

/**
 * The current batch's waits, most blocking first: an ended campaign waits for nothing (or for
 * its in-flight nodes to finish); a paused one for its operator; one rolling back for its
 * rollbacks; a running batch for its window, its in-flight nodes, its deferred and
 * disconnected nodes, its slots (concurrency, download budget, pool budget), its minimum
 * duration and soak, then its gates. A running batch that waits for none of these reports
 * `next_decision` (it passes when the worker next decides). Never empty.
 */
export function waitsFor(input: WaitsInput): Wait[] {
  const { campaign: c, now } = input;
  const b = c.batches[c.currentBatch];
  if (isEndedPhase(c.phase)) {
    if (c.finishedAt !== undefined) return [{ kind: "ended", phase: c.phase }];
    const left = input.nodes.filter((n) => !isFinal(n.state)).length;
    return [{ kind: "finishing", phase: c.phase, inFlight: left }];
  }
  if (c.phase === "rolling_back") {
    const pending = input.nodes.filter((n) => n.state === "rolling_back").length;
    return [{ kind: "rolling_back", pending }];
  }
  const out: Wait[] = [];
  if (c.phase === "paused") {
    out.push({
      kind: "paused",
      by: input.pause?.by ?? "",
      at: input.pause?.at ?? c.pausedAt ?? now,
      reason: input.pause?.reason ?? c.message ?? "",
    });
  }
  if (b === undefined || b.state !== "running") {
    if (out.length === 0) out.push({ kind: "next_decision" });
    return out;
  }
  const windows = c.spec.windows ?? [];
  const open = windowOpen(windows, now);
  if (!open) {
    out.push({
      kind: "window_closed",
      opensAt: nextWindowChange(windows, now),
      timeZone: windows[0]?.timeZone ?? "UTC",
    });
  }
  const batch = input.nodes.filter((n) => n.batch === b.index);
  for (const w of nodeWaits(input, batch, c.phase === "running" && open)) out.push(w);
  const allSettled = batch.every((n) => isSettled(n, now));
  const counted = countedMs(b, c.pausedAt, now, windows);
  if (counted < b.minDurationMs)
    out.push({ kind: "min_duration", leftMs: b.minDurationMs - counted });
  if (allSettled && b.settledAt !== undefined && c.spec.soakMs > 0) {
    const soaked = soakedMs(b.settledAt, now, windows);
    if (soaked < c.spec.soakMs) out.push({ kind: "soak", leftMs: c.spec.soakMs - soaked });
  }
  if (allSettled) for (const w of gateWaits(input)) out.push(w);
  if (out.length === 0) out.push({ kind: "next_decision" });
  return out;
}

/** The latest of `at` over `nodes` (a loop: the batch may be any size). */
function latest(nodes: readonly CampaignNode[], at: (n: CampaignNode) => number): number {
  let last = Number.NEGATIVE_INFINITY;
  for (const n of nodes) last = Math.max(last, at(n));
  return last;
}

function nodeWaits(input: WaitsInput, batch: readonly CampaignNode[], offering: boolean): Wait[] {
  const { campaign: c, now } = input;
  const out: Wait[] = [];
  // Offered, applying or restarting (a node rolling back holds a slot too, but is no upgrade).
  const upgrading = batch.filter((n) => isUpgrading(n.state) && n.state !== "verifying");
  if (upgrading.length > 0) {
    const last = latest(upgrading, (n) => n.reconnectDeadline ?? now);
    out.push({ kind: "upgrading", count: upgrading.length, deadlineLeftMs: positive(last - now) });
  }
  const verifying = batch.filter((n) => n.state === "verifying" && inFlight(n, now));
  if (verifying.length > 0) {
    const last = latest(verifying, (n) => n.graceEndsAt ?? now);
    out.push({ kind: "verifying", count: verifying.length, graceLeftMs: positive(last - now) });
  }
  const all = batch.filter((n) => n.state === "waiting");
  const deferred = all.filter((n) => n.deferredAt !== undefined);
  if (deferred.length > 0) {
    let soonest = Number.POSITIVE_INFINITY;
    for (const n of deferred) soonest = Math.min(soonest, n.deferRetryAt ?? now);
    out.push({
      kind: "deferred",
      count: deferred.length,
      nextOfferLeftMs: positive(soonest - now),
    });
  }
  // A deferred node waits for its retry time before it is one to offer again.
  const waiting = all.filter((n) => n.deferRetryAt === undefined || n.deferRetryAt <= now);
  if (waiting.length === 0 || !offering) return out;
  const online = input.online ?? (() => true);
  const reachable = waiting.filter((n) => online(n.nodeId));
  if (reachable.length < waiting.length)
    out.push({ kind: "disconnected", count: waiting.length - reachable.length });
  if (reachable.length === 0) return out;
  const own = input.nodes.filter((n) => inFlight(n, now));
  const limit = concurrencyLimit(c.spec.concurrency);
  if (own.length >= limit) {
    out.push({ kind: "concurrency", inFlight: own.length, limit });
    return out;
  }
  // The engine offers nothing while the campaign's download budget is full (`offer.ts`).
  const maxDownloads = downloadLimit(c.spec);
  if (Number.isFinite(maxDownloads)) {
    const phases = input.upgradePhases;
    const phaseOf = (n: CampaignNode) =>
      n.upgradeOperationId === undefined ? undefined : phases?.get(n.upgradeOperationId);
    const downloading = input.nodes.filter((n) => downloadingAfter(n, phaseOf(n))).length;
    if (downloading >= maxDownloads) {
      out.push({ kind: "download_budget", downloading, limit: maxDownloads });
      return out;
    }
  }
  const blocked = new Set<string>();
  for (const pool of new Set(reachable.map((n) => n.pool))) {
    const load = input.pools?.get(pool);
    const size = load?.size ?? input.nodes.filter((n) => n.pool === pool).length;
    const poolMax = poolLimit(size, c.spec.disruptionBudgetPercent);
    const busy = (load?.inFlightElsewhere ?? 0) + own.filter((n) => n.pool === pool).length;
    if (busy >= poolMax) {
      blocked.add(pool);
      out.push({ kind: "pool_budget", pool, inFlight: busy, limit: poolMax });
    }
  }
  const offerable = reachable.filter((n) => !blocked.has(n.pool)).length;
  if (offerable > 0) out.push({ kind: "to_offer", count: offerable });
  return out;
}

function gateWaits(input: WaitsInput): Wait[] {
  const { campaign: c, now } = input;
  const b = c.batches[c.currentBatch];
  const gates = c.spec.gates ?? [];
  if (b === undefined || gates.length === 0) return [];
  const counting = countingResults(b, input.gates ?? [], input.readyAt);
  const graceMs = c.spec.gateGraceMs ?? 0;
  const out: Wait[] = [];
  gates.forEach((_, i) => {
    if (b.skippedGates?.includes(i)) return;
    const label = gateLabel(gates, i);
    const r = counting.get(i);
    if (r === undefined) out.push({ kind: "gate_pending", label });
    else if (r.status === "fail")
      out.push({ kind: "gate_failing", label, value: r.value, message: r.message });
    else if (r.status === "unreachable") {
      const since = r.unreachableSince ?? r.at;
      out.push({
        kind: "gate_unreachable",
        label,
        forMs: positive(now - since),
        graceMs,
        value: r.value,
      });
    }
  });
  return out;
}
