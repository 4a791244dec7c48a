/**
 * The exponential ramp, an alternative to fixed batches: start at a rate, multiply it after
 * each step that passes, up to a maximum. A step IS a batch: step i lasts `stepMs` (its minimum
 * duration, like any batch's) and holds `rate_i × stepMs` nodes, with `rate_i = min(start ×
 * factor^i, max)`. So every batch rule — threshold per step, breach and on_breach, pass,
 * confirm, rollback, pool budgets, concurrency — applies to each step unchanged, and the
 * canary rule too: the first step holds at most the policy's first-batch share of the nodes.
 */

/** A ramp, as stored in a resolved spec. */
export interface Ramp {
  /** Nodes per minute in the first step (> 0; fractional for rates per hour). */
  readonly startPerMinute: number;
  /** The rate's multiplier after each step that passes (≥ 1). */
  readonly factor: number;
  /** The rate never exceeds this (nodes per minute); 0 = no maximum. */
  readonly maxPerMinute: number;
  /** How long each step lasts at least: its batch's minimum duration. */
  readonly stepMs: number;
}

/** The outcome of {@link parseRate} and {@link parseRamp}. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

const PER_MINUTE: Readonly<Record<string, number>> = {
  s: 60,
  sec: 60,
  m: 1,
  min: 1,
  h: 1 / 60,
  hour: 1 / 60,
};

/** Parses a rate `N/s`, `N/min` or `N/h` into nodes per minute. */
export function parseRate(text: string): Parsed<number> {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*([a-z]+)\s*$/i.exec(text);
  const per = m ? PER_MINUTE[(m[2] as string).toLowerCase()] : undefined;
  if (m === null || per === undefined) {
    return { ok: false, message: `"${text}" is not a rate; expected N/s, N/min or N/h` };
  }
  const value = Number(m[1]) * per;
  if (!(value > 0)) return { ok: false, message: `the rate "${text}" must be above 0` };
  return { ok: true, value };
}

/**
 * Parses `RATE×FACTOR` (`10/min×2`; `x` or `*` for `×`; without a factor the rate doubles).
 * The maximum and step length come from their own settings.
 */
export function parseRamp(text: string): Parsed<{ startPerMinute: number; factor: number }> {
  const [ratePart, factorPart, extra] = text.split(/[×xX*]/);
  if (extra !== undefined || ratePart === undefined) {
    return { ok: false, message: `"${text}" is not a ramp; expected RATE×FACTOR, e.g. 10/min×2` };
  }
  const rate = parseRate(ratePart);
  if (!rate.ok) return { ok: false, message: `ramp "${text}": ${rate.message}` };
  const factor = factorPart === undefined ? 2 : Number(factorPart.trim());
  if (!Number.isFinite(factor) || factor < 1 || factorPart?.trim() === "") {
    return { ok: false, message: `ramp "${text}": the factor must be a number ≥ 1` };
  }
  return { ok: true, value: { startPerMinute: rate.value, factor } };
}

/** A rate in nodes per minute as text (`10/min`, `0.5/min`). */
export function formatRate(perMinute: number): string {
  return `${Math.round(perMinute * 1000) / 1000}/min`;
}

/** The canonical text of a ramp. */
export function formatRamp(r: Ramp): string {
  const max = r.maxPerMinute > 0 ? `, max ${formatRate(r.maxPerMinute)}` : "";
  return `${formatRate(r.startPerMinute)}×${r.factor}${max}, steps of ${Math.round(r.stepMs / 1000)} s`;
}

/**
 * How many nodes step `i` may hold: `max(1, floor(rate_i × stepMs / 1 min))`, where the rate
 * grows by `factor` per step and stops at `maxPerMinute`. Does not include the canary cap of
 * the first step (see {@link rampSizes}).
 */
export function rampStepLimit(r: Ramp, i: number): number {
  let rate = r.startPerMinute * r.factor ** i;
  if (r.maxPerMinute > 0) rate = Math.min(rate, r.maxPerMinute);
  const n = Math.floor((rate * r.stepMs) / 60_000 + 1e-9);
  return Number.isFinite(n) ? Math.max(1, n) : Number.MAX_SAFE_INTEGER;
}

/**
 * The most steps {@link rampSizes} ever lays out, whatever the policy: a guard on the size of a
 * plan. Admission refuses a ramp long before it (`admit.ts`: at most the policy's batch limit).
 */
export const MAX_RAMP_STEPS = 200;

/**
 * How many steps the ramp takes to reach all `total` nodes with no limit on their number (the
 * first step capped at `firstMaxPercent` of the nodes, as in {@link rampSizes}); 0 for 0 nodes.
 * Each step takes at least one node, so this is at most `total`.
 */
export function rampStepsNeeded(total: number, r: Ramp, firstMaxPercent: number): number {
  let left = total;
  let steps = 0;
  while (left > 0) {
    let size = rampStepLimit(r, steps);
    if (steps === 0)
      size = Math.min(size, Math.max(1, Math.floor((total * firstMaxPercent) / 100)));
    left -= size;
    steps++;
  }
  return steps;
}

/**
 * The node count of each step for `total` nodes: {@link rampStepLimit} each, the first capped at
 * `firstMaxPercent` of the nodes (at least one: the canary rule). Empty for 0 nodes. Past
 * {@link MAX_RAMP_STEPS} steps one more takes every node left (beyond its limit): a start
 * refuses such a plan, and invariant R1 flags it.
 */
export function rampSizes(total: number, r: Ramp, firstMaxPercent: number): number[] {
  const sizes: number[] = [];
  let left = total;
  for (let i = 0; left > 0 && i <= MAX_RAMP_STEPS; i++) {
    let size = rampStepLimit(r, i);
    if (i === 0) size = Math.min(size, Math.max(1, Math.floor((total * firstMaxPercent) / 100)));
    size = i === MAX_RAMP_STEPS ? left : Math.min(size, left);
    sizes.push(size);
    left -= size;
  }
  return sizes;
}
