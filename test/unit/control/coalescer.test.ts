import { describe, expect, it } from "vitest";
import { Coalescer } from "../../../control/db/coalescer.js";

/** A batch `execute` whose batches the test settles by hand. */
function manualExecute<R>(answer: (item: number) => R) {
  const batches: {
    items: number[];
    succeed: () => void;
    fail: (error: unknown) => void;
    answerWith: (results: R[]) => void;
  }[] = [];
  let executing = 0;
  let maxExecuting = 0;
  const execute = (items: number[]) =>
    new Promise<R[]>((resolve, reject) => {
      executing += 1;
      maxExecuting = Math.max(maxExecuting, executing);
      const done = () => {
        executing -= 1;
      };
      batches.push({
        items,
        succeed: () => {
          done();
          resolve(items.map(answer));
        },
        fail: (error) => {
          done();
          reject(error);
        },
        answerWith: (results) => {
          done();
          resolve(results);
        },
      });
    });
  return { execute, batches, maxExecuting: () => maxExecuting };
}

/** Lets settled promises run their callbacks. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Starts `run` for each item and records how each call settles. */
function runAll<R>(coalescer: Coalescer<number, R>, items: number[]) {
  const outcomes = new Map<number, { value: R } | { error: unknown }>();
  const all = Promise.all(
    items.map((item) =>
      coalescer.run(item).then(
        (value) => outcomes.set(item, { value }),
        (error: unknown) => outcomes.set(item, { error }),
      ),
    ),
  );
  return { outcomes, all };
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe("Coalescer", { timeout: 5000 }, () => {
  it("executes a lone item at once, in a batch of its own, with no timer delay", async () => {
    const fake = manualExecute((n) => n * 10);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 4, maxBatch: 100 });
    const result = coalescer.run(7);
    // Started synchronously inside run(), before any timer or microtask.
    expect(fake.batches.map((b) => b.items)).toEqual([[7]]);
    fake.batches[0]?.succeed();
    await expect(result).resolves.toBe(70);
  });

  it("starts a batch per call while fewer than maxInFlight are executing", () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 3, maxBatch: 100 });
    runAll(coalescer, [1, 2, 3]);
    expect(fake.batches.map((b) => b.items)).toEqual([[1], [2], [3]]);
    expect(coalescer.queued).toBe(0);
  });

  it("queues once maxInFlight batches are executing and takes the queue as one batch", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 2, maxBatch: 100 });
    const { all, outcomes } = runAll(coalescer, range(1, 50));
    expect(fake.batches.map((b) => b.items)).toEqual([[1], [2]]);
    expect(coalescer.executing).toBe(2);
    expect(coalescer.queued).toBe(48);
    fake.batches[0]?.succeed();
    await flush();
    expect(fake.batches[2]?.items).toEqual(range(3, 48));
    expect(coalescer.queued).toBe(0);
    fake.batches[1]?.succeed();
    fake.batches[2]?.succeed();
    await all;
    expect(outcomes.size).toBe(50);
  });

  it("grows batches with the load: the busier it is, the more items per execute", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 1, maxBatch: 1000 });
    const { all } = runAll(coalescer, range(0, 1));
    runAll(coalescer, range(1, 10));
    fake.batches[0]?.succeed();
    await flush();
    runAll(coalescer, range(11, 200));
    fake.batches[1]?.succeed();
    await flush();
    fake.batches[2]?.succeed();
    await all;
    expect(fake.batches.map((b) => b.items.length)).toEqual([1, 10, 200]);
  });

  it("never executes more than maxInFlight batches at once", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 3, maxBatch: 5 });
    const { all, outcomes } = runAll(coalescer, range(0, 100));
    // Settle batches one at a time, oldest first, until all are done.
    let settled = 0;
    while (settled < fake.batches.length) {
      const open = fake.batches.slice(settled);
      expect(open.length).toBeLessThanOrEqual(3);
      fake.batches[settled]?.succeed();
      settled += 1;
      await flush();
    }
    await all;
    expect(fake.maxExecuting()).toBe(3);
    expect(outcomes.size).toBe(100);
  });

  it("never puts more than maxBatch items in one batch, oldest items first", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 1, maxBatch: 4 });
    const { all } = runAll(coalescer, range(0, 11));
    for (let i = 0; i < 4; i += 1) {
      fake.batches[i]?.succeed();
      await flush();
    }
    await all;
    expect(fake.batches.map((b) => b.items)).toEqual([[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]);
  });

  it("gives each caller the result at its own position in the batch", async () => {
    const fake = manualExecute((n) => `result of ${n}`);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 1, maxBatch: 100 });
    const items = [5, 3, 9, 3, 1];
    const calls = items.map((n) => coalescer.run(n));
    fake.batches[0]?.succeed();
    await flush();
    expect(fake.batches[1]?.items).toEqual([3, 9, 3, 1]);
    fake.batches[1]?.succeed();
    expect(await Promise.all(calls)).toEqual(items.map((n) => `result of ${n}`));
  });

  it("rejects every caller of a failed batch with its error, and later batches still run", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 1, maxBatch: 100 });
    const { all, outcomes } = runAll(coalescer, range(0, 5));
    fake.batches[0]?.succeed();
    await flush();
    const boom = new Error("connection lost");
    fake.batches[1]?.fail(boom);
    await flush();
    const later = runAll(coalescer, [100, 101]);
    await flush();
    expect(fake.batches[2]?.items).toEqual([100]);
    fake.batches[2]?.succeed();
    await flush();
    fake.batches[3]?.succeed();
    await all;
    await later.all;
    expect(outcomes.get(0)).toEqual({ value: 0 });
    for (const item of range(1, 4)) expect(outcomes.get(item)).toEqual({ error: boom });
    expect([...later.outcomes.values()]).toEqual([{ value: 100 }, { value: 101 }]);
    expect(fake.batches).toHaveLength(4);
  });

  it("rejects the whole batch when execute throws before returning a promise", async () => {
    const coalescer = new Coalescer<number, number>({
      execute: () => {
        throw new Error("bad statement");
      },
      maxInFlight: 1,
      maxBatch: 10,
    });
    await expect(coalescer.run(1)).rejects.toThrow("bad statement");
    await expect(coalescer.run(2)).rejects.toThrow("bad statement");
    expect(coalescer.executing).toBe(0);
  });

  it("rejects the whole batch when execute answers with the wrong number of results", async () => {
    const fake = manualExecute((n) => n);
    const coalescer = new Coalescer({ execute: fake.execute, maxInFlight: 1, maxBatch: 10 });
    const { all, outcomes } = runAll(coalescer, [1, 2, 3]);
    fake.batches[0]?.succeed();
    await flush();
    fake.batches[1]?.answerWith([2]);
    await all;
    expect(outcomes.get(1)).toEqual({ value: 1 });
    for (const item of [2, 3]) {
      const outcome = outcomes.get(item);
      expect(outcome && "error" in outcome && String(outcome.error)).toMatch(
        /returned 1 results for 2 items/,
      );
    }
  });

  it("refuses limits that are not positive integers", () => {
    const execute = async (items: number[]) => items;
    expect(() => new Coalescer({ execute, maxInFlight: 0, maxBatch: 1 })).toThrow(RangeError);
    expect(() => new Coalescer({ execute, maxInFlight: 1, maxBatch: 1.5 })).toThrow(/maxBatch/);
  });
});
