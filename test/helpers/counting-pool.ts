/**
 * A `pg` pool that counts the statements sent through it, for tests asserting that calls are
 * coalesced into few statements.
 */
import type pg from "pg";

/** Wraps `pool`: `query` goes through to it, and `statements()` says how many were sent. */
export function countingPool(pool: pg.Pool): { pool: pg.Pool; statements: () => number } {
  let statements = 0;
  const counting = {
    query: (...args: Parameters<pg.Pool["query"]>) => {
      statements += 1;
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
  } as unknown as pg.Pool;
  return { pool: counting, statements: () => statements };
}
