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

import { scheduleAdminActions } from "./admin-events.js";
import { convergenceAborter } from "./convergence-aborts.js";
import { scheduleConvergenceBurst } from "./convergence-burst-events.js";
import { deferralAborter } from "./deferral-aborts.js";
import { scheduleFaults, scheduleGateFaults } from "./fault-events.js";
import { scheduleLateRollback } from "./late-rollback.js";
import { scheduleOperator } from "./operator-events.js";
import type { Outcome } from "./outcome.js";
import { pauseAnswerer } from "./pause-answers.js";
import type { FleetScenario } from "./rollout-scenario.js";
import { buildWorld } from "./sim-world.js";
import { scheduleSoakTakeover } from "./soak-takeovers.js";
import { runToEnd, type Violation } from "./step-loop.js";

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
}

/** Runs the scenario of `seed` to its end or to its first violation. */
export async function runSeed(seed: number, options: RunOptions): Promise<RunResult> {
  const world = buildWorld(seed, options);
  // With faults a second Control stands by to take the lease when the leader dies.
  world.startControl();
  if (options.faults) world.startControl();
  scheduleOperator(world);
  scheduleAdminActions(world);
  scheduleConvergenceBurst(world);
  scheduleFaults(world);
  scheduleGateFaults(world);
  scheduleSoakTakeover(world);
  scheduleLateRollback(world);
  const answerPauses = pauseAnswerer(world);
  const abortConvergence = convergenceAborter(world);
  const abortDeferral = deferralAborter(world);
  const end = await runToEnd(world, () => {
    answerPauses();
    abortConvergence();
    abortDeferral();
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
