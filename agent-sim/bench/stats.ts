/** Small statistics over repeated measurements: medians, percentiles, slopes. */

/** The median of `values`: the middle one, or the mean of the two middle ones (NaN when empty). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const upper = sorted[mid] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

/** The `p`-th percentile (nearest rank) of `values` (NaN when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] as number;
}

/** Least-squares slope of y over x (NaN with fewer than two distinct x). */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** `a / b`, or NaN when `b` is not a positive finite number. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(b) && b > 0 && Number.isFinite(a) ? a / b : Number.NaN;
}

/** Elapsed milliseconds of a synchronous-or-async step. */
export async function timed<T>(step: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await step();
  return { value, ms: performance.now() - start };
}

/** The range of a figure over its repeats. */
export interface Spread {
  readonly min: number;
  readonly max: number;
  /** How many repeats the range is over (1: the spread is not known). */
  readonly runs: number;
}

/** The range of `values` (NaN bounds when empty). */
export function spreadOf(values: readonly number[]): Spread {
  const finite = values.filter(Number.isFinite);
  return {
    min: finite.length > 0 ? Math.min(...finite) : Number.NaN,
    max: finite.length > 0 ? Math.max(...finite) : Number.NaN,
    runs: finite.length,
  };
}

/**
 * The range of `project / baseline` over repeats that were not measured in pairs: from the
 * lowest project reading over the highest baseline one to the highest over the lowest (every
 * pairing the repeats allow falls inside). `runs` is the fewer repeats of the two sides.
 */
export function unpairedRatioSpread(
  project: readonly number[],
  baseline: readonly number[],
): Spread {
  const p = spreadOf(project);
  const b = spreadOf(baseline);
  return { min: ratio(p.min, b.max), max: ratio(p.max, b.min), runs: Math.min(p.runs, b.runs) };
}
