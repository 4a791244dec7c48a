/**
 * A counting wrapper for cost tests: while `fn` runs, every call of an Array method that may
 * visit each element (includes, indexOf, find, some, filter, map, …) adds the array's length
 * to the count, and every comparison a sort makes adds one. Set and Map lookups are not
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
] as const;

type AnyFn = (this: unknown[], ...args: unknown[]) => unknown;

/** Runs `fn` with the Array methods counted; returns what it returned and the count. */
export function countScans<T>(fn: () => T): { result: T; visits: number } {
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
  try {
    return { result: fn(), visits };
  } finally {
    for (const [name, original] of saved) proto[name] = original;
  }
}
