/**
 * A small seeded pseudo-random generator (mulberry32). The simulator uses it wherever an
 * outcome must be reproducible from `--seed`: which agents get which behaviour, and each
 * agent's restart delays. Not for anything security-related.
 */

/** A deterministic generator of floats in [0, 1). */
export interface Prng {
  /** The next float in [0, 1); the sequence depends only on the seed. */
  next(): number;
}

/** Creates a mulberry32 generator; equal seeds give equal sequences. */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Derives an independent seed for stream `n` of `seed` (so streams do not correlate). */
export function deriveSeed(seed: number, n: number): number {
  let h = (seed ^ Math.imul(n + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** The integers 0…n-1 in an order that depends only on `prng`'s seed (Fisher–Yates). */
export function shuffledIndexes(n: number, prng: Prng): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(prng.next() * (i + 1));
    const a = order[i]!;
    order[i] = order[j]!;
    order[j] = a;
  }
  return order;
}

/** A uniformly drawn integer in [min, max] (inclusive). */
export function intBetween(prng: Prng, min: number, max: number): number {
  return min + Math.floor(prng.next() * (max - min + 1));
}
