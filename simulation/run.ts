/**
 * One seeded run of the deterministic simulation: the real campaign worker (and so the real
 * engine) on the memory campaign store, a manual clock, and the simulated fleet, stepped in
 * virtual time. After every step the invariants are checked; the first violation ends the
 * run with the step, the invariant and the last lines of the trace. With faults, Controls
 * crash and restart, lose their lease and lose their database at the scenario's times.
 *
 * Nothing here reads the wall clock or a random source other than the seed, and every
 * asynchronous call resolves on the microtask queue (the memory store does no I/O), so a seed
 * replays exactly.
 */

import { generateScenario } from "./generator.js";
import type { Outcome } from "./outcome.js";
import type { FleetScenario } from "./rollout-scenario.js";
import { buildWorld } from "./sim-world.js";
import { runToEnd, type Violation } from "./step-loop.js";
import { unitsOf } from "./unit-registry.js";

/** The result of one run. */
export interface RunResult {
  readonly seed: number;
  readonly faults: boolean;
  readonly steps: number;
  readonly virtualMs: number;
  /** How many campaigns were started. */
  readonly campaigns: number;
  readonly violation?: Violation;
  /** The last lines of the trace (every line with `fullTrace`). */
  readonly trace: readonly string[];
  readonly outcome: Outcome;
  readonly scenario: FleetScenario;
  /** Whether the simulated operator resumed a paused campaign (`pause-answers.ts`). */
  readonly resumed: boolean;
}

/** Options of {@link runSeed}. */
export interface RunOptions {
  readonly faults: boolean;
  readonly fullTrace?: boolean;
  /**
   * The registry generation whose units make the scenario (`unit-registry.ts`; default: the
   * newest). A seed pinned on an earlier generation names it, to replay what it was pinned on.
   */
  readonly generation?: number;
}

/** Runs the scenario of `seed` to its end or to its first violation. */
export async function runSeed(seed: number, options: RunOptions): Promise<RunResult> {
  const units = unitsOf(options.generation);
  const world = buildWorld(generateScenario(seed, options.faults, units), options);
  // With faults a second Control stands by to take the lease when the leader dies.
  world.startControl();
  if (options.faults) world.startControl();
  const hooks: (() => void)[] = [];
  for (const unit of units) {
    const hook = unit.schedule?.(world);
    if (hook !== undefined) hooks.push(hook);
  }
  const end = await runToEnd(world, () => {
    for (const hook of hooks) hook();
  });
  return {
    seed,
    faults: options.faults,
    steps: end.steps,
    virtualMs: end.virtualMs,
    // Those the leader started itself (convergence, plan groups) included.
    campaigns: end.campaigns,
    ...(end.violation === undefined ? {} : { violation: end.violation }),
    trace: world.trace,
    outcome: end.outcome,
    scenario: world.scenario,
    resumed: world.outcomeChecks.commands.some((c) => c.kind === "resume"),
  };
}
