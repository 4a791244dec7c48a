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
