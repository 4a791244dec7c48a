/**
 * The engine's cost in the size of the fleet, counted, never timed, for the operations the
 * engine scaling benchmark times (`agent-sim/bench/engine-world.ts`: planning, a decision at a
 * batch boundary with deferring nodes carried over, a retry after a canary breach, a
 * convergence pass, `campaign why`'s waits and the fleet summary, over the memory store). Two
 * counts at 2,000 and 8,000 nodes: the elements visited or moved by Array scans, splices and
 * sort comparisons (`scan-count.ts`), and the rows and entries every store read returns. Each
 * may grow 4× for 4× the nodes, with n log n's share and a margin; a step that scans a list per
 * node, splices one per node or reads the store per node grows 16×.
 */
import { describe, expect, it } from "vitest";
import {
  ENGINE_OPERATIONS,
  type EngineOperation,
  prepare,
} from "../../../agent-sim/bench/engine-operations.js";
import type { EngineWorld } from "../../../agent-sim/bench/engine-world.js";
import type { CampaignTransaction } from "../../../control/campaign-store/index.js";
import { countScansAsync } from "./scan-count.js";

const N = 2000;

/** The growth allowed from N to 4N: 4× for linear work, with n log n's share and 10 %. */
const ALLOWED = 4 * (Math.log2(4 * N) / Math.log2(N)) * 1.1;

/** How many rows or entries `value` holds, as a store read returned it. */
function rowsOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  return value === undefined || value === null ? 0 : 1;
}

/**
 * Counts every read of the world's store from now on: each call of a transaction's method
 * (the campaign store's and the fleet store's, which runs in it) adds the rows it returned.
 */
function countStoreReads(w: EngineWorld): { rows: () => number; calls: () => number } {
  let rows = 0;
  let calls = 0;
  const store = w.store;
  const original = store.transaction.bind(store);
  store.transaction = <T>(work: (tx: CampaignTransaction) => Promise<T>) =>
    original((tx) =>
      work(
        new Proxy(tx, {
          get(target, name, receiver) {
            const value = Reflect.get(target, name, receiver);
            if (
              typeof value !== "function" ||
              typeof name !== "string" ||
              !name.startsWith("read")
            ) {
              return typeof value === "function" ? value.bind(target) : value;
            }
            return async (...args: unknown[]) => {
              const out = await value.apply(target, args);
              calls++;
              rows += rowsOf(out);
              return out;
            };
          },
        }),
      ),
    );
  return { rows: () => rows, calls: () => calls };
}

/** The counts of one run of `op` over `n` nodes. */
async function costOf(op: EngineOperation, n: number) {
  const prepared = await prepare(op, n);
  const reads = countStoreReads(prepared.world);
  const { visits } = await countScansAsync(prepared.run);
  return { visits, rows: reads.rows(), calls: reads.calls() };
}

describe("the engine's cost in the size of the fleet (counted at 2,000 and 8,000 nodes)", () => {
  for (const op of ENGINE_OPERATIONS) {
    it(`${op}: scans and store rows grow at most n log n`, async () => {
      const small = await costOf(op, N);
      const large = await costOf(op, 4 * N);
      expect(small.visits).toBeGreaterThan(0);
      expect(large.visits / small.visits).toBeLessThan(ALLOWED);
      expect(large.rows / Math.max(1, small.rows)).toBeLessThan(ALLOWED);
      // Reads are per operation, never per node.
      expect(large.calls).toBeLessThanOrEqual(small.calls + 2);
    }, 120_000);
  }
});
