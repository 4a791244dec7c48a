/**
 * One seed checked whole: its scenario run without faults and with them, every invariant at
 * every step of both, and I9 between them. `npm run simulate` and the vitest cases share it.
 */
import { outcomeDifference } from "./compare.js";
import { type RunOptions, type RunResult, runSeed } from "./run.js";

/** What checking one seed found. */
export interface SeedCheck {
  readonly clean: RunResult;
  /** Undefined when `faults` was off, or when the clean run already failed. */
  readonly faulty: RunResult | undefined;
  /** The report of the first broken invariant, with its trace and replay command. */
  readonly failure: string | undefined;
  readonly steps: number;
  readonly campaigns: number;
}

/** The report of a broken invariant: step, invariant, the trace's last lines, the replay command. */
export function failureReport(r: RunResult, message = r.violation?.message ?? ""): string {
  const origin = r.scenario.originMs ?? 0;
  return [
    `seed ${r.seed} (${r.faults ? "with faults" : "no faults"}) broke an invariant at step ${r.violation?.step ?? r.steps}, t=${(((r.violation?.at ?? r.virtualMs) - origin) / 1000).toFixed(3)}s${origin === 0 ? "" : ` (the virtual clock began at ${new Date(origin).toISOString()})`}:`,
    `  ${message.split("\n").join("\n  ")}`,
    "trace (last lines):",
    ...r.trace.map((l) => `  ${l}`),
    `replay: npm run simulate -- --seed ${r.seed} --campaigns 1 --trace`,
  ].join("\n");
}

/** Runs `seed` without faults and, with `faults`, again with them; compares the outcomes (I9). */
export async function checkSeed(
  seed: number,
  options: {
    readonly faults: boolean;
    readonly fullTrace?: boolean;
    /** The registry generation (`run.ts` {@link RunOptions}); default: the newest. */
    readonly generation?: number;
  },
): Promise<SeedCheck> {
  const fullTrace = options.fullTrace === true;
  const generation = options.generation === undefined ? {} : { generation: options.generation };
  const clean = await runSeed(seed, { faults: false, fullTrace, ...generation });
  if (clean.violation || !options.faults) {
    return {
      clean,
      faulty: undefined,
      failure: clean.violation ? failureReport(clean) : undefined,
      steps: clean.steps,
      campaigns: clean.campaigns,
    };
  }
  const faulty = await runSeed(seed, { faults: true, fullTrace, ...generation });
  const difference = faulty.violation ? undefined : outcomeDifference(clean, faulty);
  const failure = faulty.violation
    ? failureReport(faulty)
    : difference === undefined
      ? undefined
      : failureReport(faulty, `I9: ${difference}`);
  return {
    clean,
    faulty,
    failure,
    steps: clean.steps + faulty.steps,
    campaigns: clean.campaigns + faulty.campaigns,
  };
}
