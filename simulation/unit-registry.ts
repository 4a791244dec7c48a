/**
 * The registry of the simulation's features and faults (`units.ts`): every seed's scenario is
 * the base (`scenario.ts`) varied by each unit below, each drawing from a seed stream of its own
 * whether and how it takes part, so a seed is a random combination of them. The order is the
 * order in which units vary a stage and schedule their events (a seed replays exactly).
 *
 * Generation 1 holds the units the long runs' seeds were pinned on; generation 2 adds the faults
 * of issue 36 (`agent-faults.ts`, `old-control.ts`); generation 3 the Controls' clocks that
 * disagree and step (`clock-faults.ts`); generation 4 single database calls that fail, before
 * they write or after their commit (`db-errors.ts`).
 */
import { scheduleAdminActions } from "./admin-events.js";
import { withLostAfterUpgrade, withReportsThatLie } from "./agent-faults.js";
import { withLimits, yanksOf } from "./budget-scenario.js";
import { withClockSkew } from "./clock-faults.js";
import { convergenceAborter } from "./convergence-aborts.js";
import { scheduleConvergenceBurst } from "./convergence-burst-events.js";
import { withConvergenceBurst } from "./convergence-bursts.js";
import { scheduleDbErrors, withDbErrors } from "./db-errors.js";
import { deferralAborter } from "./deferral-aborts.js";
import { withDeferralBudget } from "./deferral-budget.js";
import { withDeferrals, withMaxDefer } from "./deferral-scenario.js";
import { withDisableNext } from "./disable-next.js";
import { withDisablePairs } from "./disable-pairs.js";
import { withDstDays } from "./dst-days.js";
import { scheduleFaults, scheduleGateFaults } from "./fault-events.js";
import { withFleetVariants } from "./fleet-variants.js";
import { withGateTakeovers } from "./gate-takeovers.js";
import { withHealthChecks } from "./health-scenario.js";
import { scheduleLateRollback, withLateRollback } from "./late-rollback.js";
import { scheduleOldControl, withOldControl } from "./old-control.js";
import { scheduleOperator } from "./operator-events.js";
import { pauseAnswerer } from "./pause-answers.js";
import { withRollout } from "./rollout-scenario.js";
import { controlFaultsOf } from "./scenario.js";
import { scheduleOf } from "./schedules.js";
import { scheduleSoakTakeover, withSoakTakeovers } from "./soak-takeovers.js";
import type { ScenarioUnit } from "./units.js";

/** The newest generation of the registry. */
export const LATEST_GENERATION = 4;

/** Every registered feature and fault, in the order they vary and schedule. */
export const SCENARIO_UNITS: readonly ScenarioUnit[] = [
  {
    name: "operator commands (start, pause, resume, abort, disable, yank), answers to pauses",
    kind: "feature",
    since: 1,
    schedule: (world) => {
      scheduleOperator(world);
      return pauseAnswerer(world);
    },
  },
  {
    name: "administrator actions (node resets, desired-version clears, plan aborts)",
    kind: "feature",
    since: 1,
    schedule: (world) => {
      scheduleAdminActions(world);
      return undefined;
    },
  },
  { name: "health checks", kind: "feature", since: 1, agents: withHealthChecks },
  {
    name: "windows, ramps and gates",
    kind: "feature",
    since: 1,
    campaign: (seed, index, spec) => scheduleOf(seed, index, spec),
  },
  {
    name: "--max-failures, --min-canaries, --max-downloads",
    kind: "feature",
    since: 1,
    campaign: (seed, index, spec) => ({ spec: withLimits(seed, index, spec) }),
  },
  {
    name: "deferral (busy agents, --max-defer)",
    kind: "feature",
    since: 1,
    agents: withDeferrals,
    campaign: (seed, index, spec) => ({ spec: withMaxDefer(seed, index, spec) }),
  },
  {
    name: "yank",
    kind: "feature",
    since: 1,
    scenario: (s) => (s.edge ? s : { ...s, yanks: yanksOf(s.seed, s.calm, "2.0.0") }),
  },
  { name: "disables mid-batch", kind: "feature", since: 1, scenario: withDisablePairs },
  {
    name: "desired versions, convergence and plans",
    kind: "feature",
    since: 1,
    rollout: withRollout,
  },
  {
    name: "fleet variants (foreign platforms, newer agents, hopeless groups, slow ramps)",
    kind: "feature",
    since: 1,
    fleet: withFleetVariants,
  },
  {
    name: "convergence burst over a pool budget",
    kind: "feature",
    since: 1,
    fleet: withConvergenceBurst,
    schedule: (world) => {
      scheduleConvergenceBurst(world);
      return undefined;
    },
  },
  {
    name: "leader crash and takeover, lost lease, database outage",
    kind: "fault",
    since: 1,
    scenario: (s, faults) => (faults ? { ...s, faults: controlFaultsOf(s.seed) } : s),
    schedule: (world) => {
      scheduleFaults(world);
      return undefined;
    },
  },
  {
    name: "Control down or its lease lost around a gate's answers",
    kind: "fault",
    since: 1,
    fleet: withGateTakeovers,
    schedule: (world) => {
      scheduleGateFaults(world);
      return undefined;
    },
  },
  {
    name: "Control down across a late revert during a soak",
    kind: "fault",
    since: 1,
    fleet: withSoakTakeovers,
    schedule: (world) => {
      scheduleSoakTakeover(world);
      return undefined;
    },
  },
  {
    name: "a rollback decided across a takeover while a final node is away",
    kind: "fault",
    since: 1,
    fleet: withLateRollback,
    schedule: (world) => {
      scheduleLateRollback(world);
      return undefined;
    },
  },
  {
    name: "one download at a time over busy agents",
    kind: "feature",
    since: 1,
    fleet: withDeferralBudget,
  },
  { name: "disables of the nodes next in line", kind: "feature", since: 1, fleet: withDisableNext },
  { name: "daylight-saving days", kind: "feature", since: 1, fleet: withDstDays },
  {
    name: "an abort of a convergence campaign",
    kind: "feature",
    since: 1,
    schedule: convergenceAborter,
  },
  {
    name: "an abort while a busy node's offer is out",
    kind: "feature",
    since: 1,
    schedule: deferralAborter,
  },
  // ---- generation 2: the faults of issue 36 ----
  {
    name: "agents that vanish after the upgrade",
    kind: "fault",
    since: 2,
    fleet: withLostAfterUpgrade,
  },
  {
    name: "agents whose reports disagree with what they run",
    kind: "fault",
    since: 2,
    fleet: withReportsThatLie,
  },
  {
    name: "a previous-release Control leading for a while",
    kind: "fault",
    since: 2,
    fleet: withOldControl,
    schedule: (world) => {
      scheduleOldControl(world);
      return undefined;
    },
  },
  // ---- generation 3: Controls whose clocks disagree ----
  {
    name: "Controls whose clocks disagree by up to 10 s, one stepping",
    kind: "fault",
    since: 3,
    fleet: withClockSkew,
  },
  // ---- generation 4: database errors that are not an outage ----
  {
    name: "single database calls failing, before they write or after their commit",
    kind: "fault",
    since: 4,
    fleet: withDbErrors,
    schedule: (world) => {
      scheduleDbErrors(world);
      return undefined;
    },
  },
];

/** The units of generation `generation` and before, in registry order. */
export function unitsOf(generation: number = LATEST_GENERATION): readonly ScenarioUnit[] {
  return SCENARIO_UNITS.filter((u) => u.since <= generation);
}
