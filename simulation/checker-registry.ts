/**
 * The registry of the simulation's checkers (`checkers.ts`): every invariant of
 * docs/campaign-engine.md's table is judged by one of these, after every step of every seed
 * and, for some, at the end of the run. Order is the order of their messages in a report.
 */
import { WORKER_LEASE } from "../control/campaign-store/index.js";
import { budgetViolations } from "./budget-invariants.js";
import type { CheckerFactory } from "./checkers.js";
import { type ClaimWorld, claimEndViolations, claimViolations } from "./claim-invariants.js";
import { clockToleranceMs } from "./clock-faults.js";
import { deferralViolations } from "./deferral-invariants.js";
import { desiredBudgetChecker } from "./desired-budget-invariants.js";
import { disruptionChecker } from "./disruption-invariants.js";
import { downloadViolations } from "./download-invariants.js";
import { checkStep } from "./fleet-invariants.js";
import { stalePassViolations, unreachableBreachViolations } from "./gate-takeovers.js";
import { healthViolations } from "./health-invariants.js";
import { lostAfterUpgradeChecker } from "./lost-invariants.js";
import { outcomeEndViolations, outcomeViolations } from "./outcome-invariants.js";
import type { OutcomeWorld } from "./outcome-world.js";
import { rolledBackChecker } from "./rolled-back-invariants.js";
import { rolloutEndViolations, rolloutViolations } from "./rollout-invariants.js";
import { gateViolations } from "./sim-gates.js";
import { PLATFORM, SIM_RULES, type SimWorld } from "./sim-world.js";
import { soakViolations } from "./soak-invariants.js";
import { windowOfferChecker } from "./window-offer-invariants.js";

const campaignsOf = (w: SimWorld) => [...w.store.tables.campaigns.values()].map((c) => c.campaign);

const outcomeWorld = (w: SimWorld): OutcomeWorld => ({
  store: w.store,
  fleetStore: w.fleetStore,
  fleet: w.fleet,
  disabledAt: w.checks.disabledAt,
  state: w.outcomeChecks,
  clockToleranceMs: clockToleranceMs(w.scenario.clockSkew),
});

/** Every registered checker, in report order. */
export const CHECKERS: readonly CheckerFactory[] = [
  (w) => ({
    invariants: ["I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "C1", "W1", "W2", "R1", "G1"],
    step: (now) => {
      // Campaigns the leader started itself (convergence, plan groups) select their nodes then.
      for (const [id, nodes] of w.store.tables.nodes)
        if (!w.checks.members.has(id))
          w.checks.members.set(id, new Set(nodes.map((n) => n.nodeId)));
      const tolerance = clockToleranceMs(w.scenario.clockSkew);
      return [...checkStep(w.store, w.fleet, w.checks, now, tolerance), ...w.judging.splice(0)];
    },
  }),
  (w) => {
    const truth = outcomeWorld(w);
    return {
      invariants: ["O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8", "O9"],
      step: (now) => outcomeViolations(truth, now),
      end: (now) => outcomeEndViolations(truth, now),
    };
  },
  (w) => {
    const claims: ClaimWorld = {
      store: w.store,
      fleetStore: w.fleetStore,
      fleet: w.fleet,
      commands: w.outcomeChecks.commands,
      maxBatches: SIM_RULES.policy.maxBatches,
      platform: PLATFORM,
      state: w.claimChecks,
    };
    return {
      invariants: ["O10", "O11"],
      step: (now) => claimViolations(claims, now),
      end: () => claimEndViolations(claims),
    };
  },
  (w) => ({
    invariants: ["D1", "D2", "D3", "P1", "P2", "P3"],
    step: () => rolloutViolations(w.store, w.fleetStore, w.fleet, w.rolloutChecks),
    end: (now) =>
      rolloutEndViolations(
        w.store,
        w.fleetStore,
        w.fleet,
        now,
        w.scenario.rollout.convergenceIntervalMs,
      ),
  }),
  (w) => ({
    invariants: ["B1", "B2", "B3"],
    step: (now) =>
      budgetViolations(
        {
          store: w.store,
          fleet: w.fleet,
          commands: w.outcomeChecks.commands,
          platform: PLATFORM,
          state: w.budgetChecks,
        },
        now,
      ),
  }),
  (w) => ({
    invariants: ["B4"],
    step: () => downloadViolations(w.store, w.fleet, w.downloadChecks),
  }),
  (w) => ({ invariants: ["H1"], step: (now) => healthViolations(w.store, w.fleet, now) }),
  (w, run) => ({
    invariants: ["DF1", "DF2", "DF3", "DF4", "DF5"],
    // DF5's retry time may be stamped by one leader and judged by the next: two clocks apart.
    step: () =>
      deferralViolations(w.store, w.fleet, run.faulty, 2 * clockToleranceMs(w.scenario.clockSkew)),
  }),
  (w) => {
    const judged = new Set<string>();
    return {
      invariants: ["S1"],
      step: () =>
        soakViolations(w.store, w.fleet, judged, 2 * clockToleranceMs(w.scenario.clockSkew)),
    };
  },
  (w) => ({ invariants: ["G2"], step: () => gateViolations(w.gates, campaignsOf(w)) }),
  (w) => {
    const judged = new Set<string>();
    return {
      invariants: ["G3"],
      step: () => unreachableBreachViolations(w.gates, campaignsOf(w), judged),
    };
  },
  (w) => {
    const judged = new Set<string>();
    let epoch: number | undefined;
    let leadSince = 0;
    return {
      invariants: ["G4"],
      step: (now) => {
        const lease = w.store.tables.leases.get(WORKER_LEASE);
        if (lease !== undefined && lease.epoch !== epoch) {
          epoch = lease.epoch;
          leadSince = now;
        }
        return stalePassViolations(
          w.gates,
          campaignsOf(w),
          leadSince,
          judged,
          clockToleranceMs(w.scenario.clockSkew),
        );
      },
    };
  },
  // Judged from the actors' history and records alone (issue 36).
  disruptionChecker,
  windowOfferChecker,
  rolledBackChecker,
  lostAfterUpgradeChecker,
  desiredBudgetChecker,
];
