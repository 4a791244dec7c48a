/**
 * The engine scaling scenario: each operation of `engine-world.ts` timed at each fleet size
 * (10,000, 40,000 and 160,000 nodes by default) on a fresh world, `runs` times, with the
 * growth of its time for each 4× of nodes. Each timing starts after a full garbage collection
 * (when the process runs with `--expose-gc`) so one world's garbage is not collected in the
 * next one's measurement; one small warm-up round compiles the code first.
 */
import { ENGINE_OPERATIONS, type EngineOperation, prepare } from "./engine-operations.js";
import { median } from "./stats.js";

/** The default fleet sizes: each 4× the one before. */
export const ENGINE_SIZES = [10_000, 40_000, 160_000] as const;

/** The goal: each 4× of nodes costs at most this many times the time (linear or n log n). */
export const ENGINE_GOAL = 5;

/** One run's times: operation → milliseconds at each size, in the order of the sizes. */
export type EngineRun = Record<EngineOperation, number[]>;

/** Every run of the scenario. */
export interface EngineResult {
  readonly sizes: readonly number[];
  readonly runs: readonly EngineRun[];
}

function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function timeOnce(op: EngineOperation, n: number): Promise<number> {
  const prepared = await prepare(op, n);
  collect();
  const began = performance.now();
  await prepared.run();
  return performance.now() - began;
}

/** Runs the scenario: `runs` rounds over every operation and size. */
export async function measureEngineScaling(
  options: {
    sizes?: readonly number[];
    runs?: number;
    operations?: readonly EngineOperation[];
    say?: (text: string) => void;
  } = {},
): Promise<EngineResult> {
  const sizes = options.sizes ?? ENGINE_SIZES;
  const operations = options.operations ?? ENGINE_OPERATIONS;
  const runs: EngineRun[] = [];
  for (const op of operations) await timeOnce(op, 2000);
  for (let r = 0; r < (options.runs ?? 3); r++) {
    const run = Object.fromEntries(operations.map((op) => [op, [] as number[]])) as EngineRun;
    for (const op of operations) {
      for (const n of sizes) run[op].push(await timeOnce(op, n));
      options.say?.(
        `engine run ${r + 1}: ${op}: ${run[op].map((ms) => `${ms.toFixed(0)} ms`).join(", ")}`,
      );
    }
    runs.push(run);
  }
  return { sizes, runs };
}

/** The growth of one operation's time from size `k` to size `k + 1`, in each run. */
function growths(result: EngineResult, op: EngineOperation, k: number): number[] {
  return result.runs.flatMap((run) => {
    const times = run[op];
    if (times === undefined) return [];
    const from = times[k];
    const to = times[k + 1];
    return from === undefined || to === undefined || from <= 0 ? [] : [to / from];
  });
}

/** The operations measured in `result`, in the table's order. */
function operationsOf(result: EngineResult): EngineOperation[] {
  const first = result.runs[0];
  return ENGINE_OPERATIONS.filter((op) => first?.[op] !== undefined);
}

/** The worst median growth over the steps, per operation: what the goal is judged on. */
export function worstGrowth(result: EngineResult): Map<EngineOperation, number> {
  const out = new Map<EngineOperation, number>();
  for (const op of operationsOf(result)) {
    let worst = 0;
    for (let k = 0; k + 1 < result.sizes.length; k++) {
      worst = Math.max(worst, median(growths(result, op, k)));
    }
    out.set(op, worst);
  }
  return out;
}

const count = (n: number) => n.toLocaleString("en-US");
const range = (values: readonly number[], digits: number) =>
  values.length === 0
    ? "—"
    : `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

/**
 * The Markdown table: per operation, the median time at each size with its range over the
 * runs, and each step's growth (median, with its range), against the goal.
 */
export function engineTable(result: EngineResult): string {
  const { sizes } = result;
  const steps = sizes
    .slice(1)
    .map((n, k) => `${count(n / 1000)}k/${count((sizes[k] ?? 0) / 1000)}k`);
  const head = [
    "operation",
    ...sizes.map((n) => `${count(n)} nodes, ms (range)`),
    ...steps.map((s) => `${s} (range)`),
    `goal ≤ ${ENGINE_GOAL}× per 4×`,
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => " --- ").join("|")}|`];
  const worst = worstGrowth(result);
  for (const op of operationsOf(result)) {
    const cells = sizes.map((_, k) => {
      const times = result.runs.map((run) => run[op][k] as number);
      return `${median(times).toFixed(0)} (${range(times, 0)})`;
    });
    const ratios = steps.map((_, k) => {
      const g = growths(result, op, k);
      return `${median(g).toFixed(2)}× (${range(g, 2)})`;
    });
    const met = (worst.get(op) ?? Number.NaN) <= ENGINE_GOAL ? "met" : "**not met**";
    lines.push(`| ${[op, ...cells, ...ratios, met].join(" | ")} |`);
  }
  return lines.join("\n");
}
