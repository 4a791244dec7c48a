/**
 * A counting wrapper for cost tests: while `fn` runs, every call of an Array method that may
 * visit or move each element (includes, indexOf, find, some, filter, map, splice, …) adds the array's length
 * to the count, every element its iterator hands out (for…of, spread) adds one, and every
 * comparison a sort makes adds one. Set and Map lookups are not
 * counted (constant time). Wall time is never read: the count is the same on any host, so a
 * test can pin how the work grows with the fleet (a linear scan per candidate counts n² where
 * a set lookup counts n).
 */

const SCANS = [
  "includes",
  "indexOf",
  "lastIndexOf",
  "find",
  "findIndex",
  "findLast",
  "findLastIndex",
  "some",
  "every",
  "filter",
  "map",
  "flatMap",
  "forEach",
  "reduce",
  "splice",
] as const;

type AnyFn = (this: unknown[], ...args: unknown[]) => unknown;

/** Runs `fn` with the Array methods counted; returns what it returned and the count. */
export function countScans<T>(fn: () => T): { result: T; visits: number } {
  const counter = installCounter();
  try {
    return { result: fn(), visits: counter.visits() };
  } finally {
    counter.restore();
  }
}

/**
 * {@link countScans} for an async `fn` (the memory store's calls resolve on microtasks): only
 * while nothing else runs, as in a unit test awaiting `fn` alone.
 */
export async function countScansAsync<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; visits: number }> {
  const counter = installCounter();
  try {
    const result = await fn();
    return { result, visits: counter.visits() };
  } finally {
    counter.restore();
  }
}

function installCounter(): { visits: () => number; restore: () => void } {
  let visits = 0;
  const proto = Array.prototype as unknown as Record<string, AnyFn>;
  const saved = new Map<string, AnyFn>();
  for (const name of SCANS) {
    const original = proto[name] as AnyFn;
    saved.set(name, original);
    proto[name] = function (this: unknown[], ...args: unknown[]) {
      visits += this.length;
      return original.apply(this, args);
    };
  }
  const sort = proto.sort as AnyFn;
  saved.set("sort", sort);
  proto.sort = function (this: unknown[], compare?: unknown) {
    const counted =
      typeof compare === "function"
        ? (a: unknown, b: unknown) => {
            visits++;
            return (compare as (a: unknown, b: unknown) => number)(a, b);
          }
        : (a: unknown, b: unknown) => {
            visits++;
            const x = String(a);
            const y = String(b);
            return x < y ? -1 : x > y ? 1 : 0;
          };
    return sort.call(this, counted);
  };
  // Every element an array's iterator hands out (for…of, spread, Array.from, destructuring).
  const iterate = Array.prototype[Symbol.iterator];
  Array.prototype[Symbol.iterator] = function (this: unknown[]) {
    const inner = iterate.call(this);
    const counting: IterableIterator<unknown> = {
      next() {
        const step = inner.next();
        if (step.done !== true) visits++;
        return step;
      },
      [Symbol.iterator]() {
        return counting;
      },
    };
    return counting as ArrayIterator<unknown>;
  };
  return {
    visits: () => visits,
    restore: () => {
      for (const [name, original] of saved) proto[name] = original;
      Array.prototype[Symbol.iterator] = iterate;
    },
  };
}
