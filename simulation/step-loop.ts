/**
 * The step loop of a run, in virtual time: advance the clock to the next due event or Control
 * step, run the due events and campaign starts, step each due Control, let the operator answer
 * pauses, trace what changed, and run every registered checker (`checker-registry.ts`). It ends when the scenario is done,
 * nothing is left to happen, the virtual time runs past {@link MAX_VIRTUAL_MS}, or an invariant
 * broke.
 */

import { CHECKERS } from "./checker-registry.js";
import { type Outcome, outcomeOf, traceChanges } from "./outcome.js";
import { DEBOUNCE_MS } from "./sim-controls.js";
import type { SimWorld } from "./sim-world.js";

/** Lets every promise continuation queued so far run (no I/O is pending in a run). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A run that has not finished every campaign this long after it began has stalled. */
const MAX_VIRTUAL_MS = 12 * 3_600_000;

/** The first broken invariant of a run. */
export interface Violation {
  readonly step: number;
  readonly at: number;
  readonly message: string;
}

/** How a run ended, taken the moment its loop ended. */
export interface RunEnd {
  readonly steps: number;
  readonly virtualMs: number;
  /** How many campaigns exist, those the leader started itself (convergence, plan groups) included. */
  readonly campaigns: number;
  readonly violation: Violation | undefined;
  readonly outcome: Outcome;
}

/**
 * Steps `world` to its end, calling `answerPauses` after every step, before the checks. A run
 * that stopped before the scenario was done breaks liveness; one that was done is checked
 * against the rollout's end invariants. Every Control then stops listening.
 */
export async function runToEnd(world: SimWorld, answerPauses: () => void): Promise<RunEnd> {
  const { scenario, clock, store, fleetStore, queue, fleet, controls, say } = world;
  const plan = scenario.rollout.plan;
  // Whether any Control goes down in this run (the deferral checks judge timing only without).
  const faulty =
    scenario.faults.length > 0 ||
    (scenario.gateFaults ?? []).length > 0 ||
    scenario.soakTakeover !== undefined ||
    scenario.lateRollback !== undefined;
  let steps = 0;
  let violation: Violation | undefined;
  const snapshot = new Map<string, Map<string, string>>();
  const checkers = CHECKERS.map((make) => make(world, { faulty }));
  // The leader's fleet passes run soon after a campaign finishes and then every interval: a run
  // ends only once a whole interval has passed since the last finish, so the passes could
  // start the next convergence campaign (a node behind its desired version waits for it).
  const lastFinish = () =>
    Math.max(...[...store.tables.campaigns.values()].map((c) => c.campaign.finishedAt ?? 0));
  const allDone = () =>
    world.campaignsStarted === scenario.campaigns.length &&
    [...store.tables.campaigns.values()].every((c) => c.campaign.finishedAt !== undefined) &&
    clock.ms >= scenario.rollout.settleUntil &&
    clock.ms >= lastFinish() + scenario.rollout.convergenceIntervalMs &&
    (plan === undefined || world.planSettled) &&
    [...fleetStore.tables.plans.values()].every((p) => p.plan.phase !== "running");
  while (violation === undefined) {
    if (allDone()) break;
    const live = controls.alive();
    const times = [queue.next(), ...live.map((c) => c.nextAt)].filter(
      (t): t is number => t !== undefined,
    );
    if (times.length === 0) break;
    let now = Math.max(clock.ms, Math.min(...times));
    if (now > (scenario.originMs ?? 0) + MAX_VIRTUAL_MS) break;
    // The stream layer's own timers (heartbeats, the hub's offline sweep, its liveness
    // writes) fire at their own times; what they do (a stream judged offline, reconnects)
    // may make an event or a Control due sooner.
    for (let timer = clock.nextDue(); timer !== undefined && timer < now; ) {
      clock.advanceTo(timer);
      await Promise.resolve();
      now = Math.max(clock.ms, Math.min(now, queue.next() ?? now, ...live.map((c) => c.nextAt)));
      timer = clock.nextDue();
    }
    clock.advanceTo(now);
    queue.runDue(now);
    // Handshakes of the streams just opened run on promises: let them reach their Welcome.
    if (fleet.streams.handshaking > 0) await settle();
    while (world.pending.length > 0) await (world.pending.shift() as () => Promise<void>)();
    for (const c of controls.all) {
      if (!c.alive || c.nextAt > now) continue;
      const { next, busy } = await c.worker.step();
      if (!c.alive) continue;
      // Its wake is on its own clock: the reference time at which its clock reads it.
      const ahead = c.clock.now().getTime() - now;
      c.nextAt = busy ? now + DEBOUNCE_MS : Math.max(next - ahead, now + 1);
    }
    steps++;
    answerPauses();
    traceChanges(store, snapshot, say);
    const found = checkers.flatMap((c) => c.step?.(now) ?? []);
    if (found.length > 0) violation = { step: steps, at: now, message: found.join("\n") };
  }
  if (violation === undefined && !allDone()) {
    const open = [...store.tables.campaigns.values()].filter(
      (c) => c.campaign.finishedAt === undefined,
    );
    violation = {
      step: steps,
      at: clock.ms,
      message: `liveness: ${open.map((c) => `${c.campaign.id} (${c.campaign.phase})`).join(", ") || "a campaign start"} did not finish`,
    };
  }
  if (violation === undefined) {
    const end = checkers.flatMap((c) => c.end?.(clock.ms) ?? []);
    if (end.length > 0) violation = { step: steps, at: clock.ms, message: end.join("\n") };
  }
  controls.unlistenAll();
  await fleet.streams.stop();
  return {
    steps,
    virtualMs: clock.ms,
    campaigns: store.tables.campaigns.size,
    violation,
    outcome: outcomeOf(store, fleet),
  };
}
