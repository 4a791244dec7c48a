/**
 * Reference model of the exponential ramp, written apart from `control/campaign/ramp.ts`: the
 * rate is grown by repeated multiplication in exact rational arithmetic (BigInt numerator and
 * denominator), so a step's size is the exact floor of `rate × step / 1 minute`, with no
 * floating point and no epsilon.
 */

/** A ramp with an exact rational rate: `startNumerator / startDenominator` nodes per minute. */
export interface RefRamp {
  readonly startNumerator: number;
  readonly startDenominator: number;
  /** The factor as a fraction: `factorNumerator / factorDenominator` (3 / 2 = ×1.5). */
  readonly factorNumerator: number;
  readonly factorDenominator: number;
  /** The maximum rate, `maxNumerator / maxDenominator` nodes per minute; 0 = no maximum. */
  readonly maxNumerator: number;
  readonly maxDenominator: number;
  readonly stepMs: number;
}

/** The most steps a ramp may take before one more takes every node left. */
export const REF_MAX_STEPS = 200;

/** How many nodes step `i` may hold: the exact floor, at least 1. */
export function refStepLimit(r: RefRamp, i: number): number {
  let num = BigInt(r.startNumerator);
  let den = BigInt(r.startDenominator);
  for (let k = 0; k < i; k++) {
    num *= BigInt(r.factorNumerator);
    den *= BigInt(r.factorDenominator);
  }
  const maxN = BigInt(r.maxNumerator);
  const maxD = BigInt(r.maxDenominator);
  if (maxN > 0n && num * maxD > maxN * den) {
    num = maxN;
    den = maxD;
  }
  const size = (num * BigInt(r.stepMs)) / (den * 60_000n);
  if (size < 1n) return 1;
  return size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size);
}

/**
 * The node count of each step for `total` nodes: each step its limit; the first at most
 * `firstMaxPercent` of the nodes rounded down, at least one; the step after the last allowed
 * one takes what is left.
 */
export function refRampSizes(total: number, r: RefRamp, firstMaxPercent: number): number[] {
  const out: number[] = [];
  let given = 0;
  let step = 0;
  while (given < total) {
    let size = refStepLimit(r, step);
    if (step === 0) {
      let canaries = 0;
      while ((canaries + 1) * 100 <= total * firstMaxPercent) canaries++;
      size = Math.min(size, Math.max(1, canaries));
    }
    if (step === REF_MAX_STEPS) size = total - given;
    size = Math.min(size, total - given);
    out.push(size);
    given += size;
    step++;
  }
  return out;
}

/** The nearest fraction p / q with q ≤ 10,000 that equals `x` to within 1e-9 of it, if any. */
function fraction(x: number): [number, number] | undefined {
  for (let q = 1; q <= 10_000; q++) {
    const p = Math.round(x * q);
    if (Math.abs(p / q - x) <= 1e-9 * Math.max(1, Math.abs(x))) return [p, q];
  }
  return undefined;
}

/**
 * The exact form of a stored ramp (rates and factors are small fractions: N/s, N/min, N/h,
 * ×1.5); undefined when one of them is no such fraction.
 */
export function refRampOf(r: {
  readonly startPerMinute: number;
  readonly factor: number;
  readonly maxPerMinute: number;
  readonly stepMs: number;
}): RefRamp | undefined {
  const start = fraction(r.startPerMinute);
  const factor = fraction(r.factor);
  const max = fraction(r.maxPerMinute);
  if (start === undefined || factor === undefined || max === undefined) return undefined;
  return {
    startNumerator: start[0],
    startDenominator: start[1],
    factorNumerator: factor[0],
    factorDenominator: factor[1],
    maxNumerator: max[0],
    maxDenominator: max[1],
    stepMs: r.stepMs,
  };
}
