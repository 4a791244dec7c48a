/**
 * The world of one seeded run, before anything happens in it: the seed's scenario (drawn by
 * `generator.ts`; this file imports no unit, so no unit's import of the world is a cycle), a manual
 * clock at 0, the memory campaign and fleet stores holding the target release, the event
 * queue, the trace, the simulated fleet and gates, and the (not yet started) Control
 * processes, with the state the invariant checks carry from step to step.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import { type AdmissionRules, DEFAULT_POLICY } from "../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../control/campaign-store/index.js";
import { createCampaignWorker } from "../control/campaign-worker/worker.js";
import { createLogger } from "../control/log.js";
import { ManualClock } from "../control/manual-clock.js";
import { SimFleet } from "./agents.js";
import { type BudgetCheckState, newBudgetCheckState } from "./budget-invariants.js";
import { type ClaimCheckState, newClaimCheckState } from "./claim-invariants.js";
import { skewedClock } from "./clock-faults.js";
import { type DownloadCheckState, newDownloadCheckState } from "./download-invariants.js";
import { EventQueue } from "./events.js";
import { type CheckState, newCheckState } from "./fleet-invariants.js";
import { History } from "./history.js";
import { newOutcomeCheckState, type OutcomeCheckState } from "./outcome-world.js";
import { newRolloutCheckState, type RolloutCheckState } from "./rollout-invariants.js";
import type { FleetScenario } from "./rollout-scenario.js";
import { DEBOUNCE_MS, SimControls } from "./sim-controls.js";
import { SimGates } from "./sim-gates.js";

/** The release every campaign of a run targets. */
export const TARGET = { version: "2.0.0", sequence: 2 };
/** The version every agent runs at first. */
export const OLD = "1.0.0";

/**
 * The simulated Control's policy: the scenarios' short batches and any first batch (their
 * shapes start at up to 100 %), the default batch limit, no maximum Agent version.
 */
export const SIM_RULES: AdmissionRules = {
  policy: { ...DEFAULT_POLICY, minBatchDurationMs: 0, firstBatchMaxPercent: 100 },
  maxVersion: undefined,
};
/** The fleet's platform, the only one the target release carries an artifact for. */
export const PLATFORM = "linux-amd64";
/** How many trace lines a run keeps without `fullTrace`. */
const TRACE_LINES = 40;

/** Everything one run acts on and checks. */
export interface SimWorld {
  readonly seed: number;
  readonly scenario: FleetScenario;
  readonly clock: ManualClock;
  readonly store: MemoryCampaignStore;
  readonly fleetStore: MemoryFleetStore;
  readonly queue: EventQueue;
  readonly fleet: SimFleet;
  readonly gates: SimGates;
  readonly controls: SimControls;
  /**
   * Starts a new Control process on this world and says so in the trace; returns its holder.
   * `engineFeatures`: the engine features it knows (default: this release's), fewer for a
   * previous release's Control (`old-control.ts`).
   */
  readonly startControl: (engineFeatures?: readonly string[]) => string;
  /** The trace: every line with `fullTrace`, else only the last ones. */
  readonly trace: string[];
  /** Adds a trace line stamped with the virtual time. */
  readonly say: (line: string) => void;
  /** What the simulated actors did, in order (`history.ts`): the checkers fold over it. */
  readonly history: History;
  readonly checks: CheckState;
  readonly rolloutChecks: RolloutCheckState;
  /** The outcome checks' state, the operator's issued commands included. */
  readonly outcomeChecks: OutcomeCheckState;
  /** The claim checks' state (`claim-invariants.ts`). */
  readonly claimChecks: ClaimCheckState;
  /** The budget checks' state (`budget-invariants.ts`), the yanks included. */
  readonly budgetChecks: BudgetCheckState;
  /** What the download budget's check (B4) remembers between steps. */
  readonly downloadChecks: DownloadCheckState;
  /**
   * Where an incrementally judged decision differed from the full one since the last step
   * (the step loop reports and empties it).
   */
  readonly judging: string[];
  /** Campaign starts due, run in order before the Controls step (each may await the store). */
  readonly pending: (() => Promise<void>)[];
  /** How many of the scenario's campaigns were started, or found nothing to start over. */
  campaignsStarted: number;
  /** The scenario's plan was started or refused (no plan: stays false, and is not waited for). */
  planSettled: boolean;
}

/**
 * Builds the world of `scenario` (the generator's, `generator.ts`: with its faults when the run
 * has faults); no Control runs yet.
 */
export function buildWorld(
  scenario: FleetScenario,
  options: { readonly fullTrace?: boolean },
): SimWorld {
  const seed = scenario.seed;
  const origin = scenario.originMs ?? 0;
  const clock = new ManualClock(origin);
  const store = new MemoryCampaignStore(clock);
  const fleetStore = new MemoryFleetStore(store);
  const queue = new EventQueue();
  const trace: string[] = [];
  const say = (line: string) => {
    trace.push(`t=${((clock.ms - origin) / 1000).toFixed(3)}s ${line}`);
    if (!options.fullTrace && trace.length > TRACE_LINES) trace.shift();
  };
  store.tables.releases.set(TARGET.version, {
    version: TARGET.version,
    sequence: TARGET.sequence,
    envelope: {
      payloadType: "application/vnd.agentcontrol.manifest+json",
      payload: new Uint8Array(),
      signatures: [],
    },
    artifacts: [{ platform: PLATFORM, sha256: "0".repeat(64), size: 1, url: "" }],
  });
  const controls = new SimControls(clock);
  const log = createLogger({ level: "silent" });
  const maxReconnect = Math.max(
    0,
    ...scenario.campaigns.map((c) => c.spec.reconnectTimeoutMs ?? 0),
    scenario.rollout.plan?.template.reconnectTimeoutMs ?? 0,
  );
  const history = new History();
  const fleet = new SimFleet(
    {
      history,
      clock,
      queue,
      store,
      prng: createPrng(deriveSeed(seed, 3)),
      oldVersion: OLD,
      platform: PLATFORM,
      kick: () => controls.kick(),
      up: () => controls.anyAlive(),
      lateAfterMs: maxReconnect,
      offlineAfterMs: scenario.offlineAfterMs,
      originMs: origin,
      log,
    },
    scenario.agents,
    TARGET.version,
  );
  const gates = new SimGates(clock, scenario.gateScripts);
  const judging: string[] = [];
  const startControl = (engineFeatures?: readonly string[]) => {
    const index = controls.all.length;
    const skew = scenario.clockSkew;
    const ownClock = skew === undefined ? clock : skewedClock(clock, skew, index);
    const holder = controls.start(
      (holder) =>
        createCampaignWorker({
          ...(engineFeatures === undefined ? {} : { engineFeatures }),
          store,
          gateway: fleet,
          clock: ownClock,
          log,
          holder,
          intervalMs: scenario.intervalMs,
          publicUrl: () => "http://control.sim",
          offlineAfterMs: scenario.offlineAfterMs,
          debounceMs: DEBOUNCE_MS,
          ...(scenario.rollout.kind === "none"
            ? {}
            : {
                fleet: {
                  store: fleetStore,
                  intervalMs: scenario.rollout.convergenceIntervalMs,
                  rules: SIM_RULES,
                },
              }),
          gateProbe: gates,
          // Every decision judged incrementally is decided in full too: any difference is a
          // violation of the step it happened in.
          compareFullJudging: (campaignId, difference) =>
            judging.push(`incremental judging: ${holder} ${campaignId}: ${difference}`),
        }),
      ownClock,
    );
    const offset = skew?.offsetsMs[index % skew.offsetsMs.length];
    const step = skew?.step?.control === index ? skew.step : undefined;
    say(
      `${holder} starts${engineFeatures === undefined ? "" : ` (a previous release, knowing ${engineFeatures.join(", ") || "no engine feature"})`}${offset === undefined ? "" : ` (its clock ${offset} ms off${step === undefined ? "" : `, stepping ${step.byMs} ms at t=${((step.at - origin) / 1000).toFixed(3)}s`})`}`,
    );
    return holder;
  };
  return {
    seed,
    scenario,
    clock,
    store,
    fleetStore,
    queue,
    fleet,
    gates,
    controls,
    startControl,
    trace,
    say,
    history,
    checks: newCheckState(),
    rolloutChecks: newRolloutCheckState(),
    outcomeChecks: newOutcomeCheckState(),
    claimChecks: newClaimCheckState(),
    budgetChecks: newBudgetCheckState(),
    downloadChecks: newDownloadCheckState(),
    judging,
    pending: [],
    campaignsStarted: 0,
    planSettled: false,
  };
}
