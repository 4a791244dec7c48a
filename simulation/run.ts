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
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import {
  type Candidate,
  createCampaign,
  createPlan,
  planCampaign,
  resolveSpec,
} from "../control/campaign/index.js";
import {
  MemoryCampaignStore,
  MemoryFleetStore,
  WORKER_LEASE,
} from "../control/campaign-store/index.js";
import { type CampaignWorker, createCampaignWorker } from "../control/campaign-worker/worker.js";
import { createLogger } from "../control/log.js";
import { ManualClock } from "../control/manual-clock.js";
import { SimFleet } from "./agents.js";
import { EventQueue } from "./events.js";
import { checkStep, newCheckState } from "./fleet-invariants.js";
import { type Outcome, outcomeOf, traceChanges } from "./outcome.js";
import {
  newRolloutCheckState,
  rolloutEndViolations,
  rolloutViolations,
} from "./rollout-invariants.js";
import { backwardsDesired, type FleetScenario, withRollout } from "./rollout-scenario.js";
import { scenarioOf } from "./scenario.js";
import { gateViolations, SimGates } from "./sim-gates.js";

const TARGET = { version: "2.0.0", sequence: 2 };
const OLD = "1.0.0";
const PLATFORM = "linux-amd64";
/** A run that has not finished every campaign by then has stalled. */
const MAX_VIRTUAL_MS = 12 * 3_600_000;
const TRACE_LINES = 40;
const DEBOUNCE_MS = 20;
/** How long a campaign stays paused before the simulated operator answers. */
const PAUSE_ANSWER_MS = 10 * 60_000;

/** The result of one run. */
export interface RunResult {
  readonly seed: number;
  readonly faults: boolean;
  readonly steps: number;
  readonly virtualMs: number;
  /** How many campaigns were started. */
  readonly campaigns: number;
  readonly violation?: { readonly step: number; readonly at: number; readonly message: string };
  /** The last lines of the trace (every line with `fullTrace`). */
  readonly trace: readonly string[];
  readonly outcome: Outcome;
  readonly scenario: FleetScenario;
}

interface Control {
  readonly holder: string;
  readonly worker: CampaignWorker;
  readonly unlisten: () => void;
  nextAt: number;
  alive: boolean;
}

/** Options of {@link runSeed}. */
export interface RunOptions {
  readonly faults: boolean;
  readonly fullTrace?: boolean;
}

/** Runs the scenario of `seed` to its end or to its first violation. */
export async function runSeed(seed: number, options: RunOptions): Promise<RunResult> {
  const scenario = withRollout(scenarioOf(seed, options.faults));
  const clock = new ManualClock(0);
  const store = new MemoryCampaignStore(clock);
  const fleetStore = new MemoryFleetStore(store);
  const queue = new EventQueue();
  const trace: string[] = [];
  const say = (line: string) => {
    trace.push(`t=${(clock.ms / 1000).toFixed(3)}s ${line}`);
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
  const controls: Control[] = [];
  const kick = () => {
    for (const c of controls) if (c.alive) c.nextAt = Math.min(c.nextAt, clock.ms + DEBOUNCE_MS);
  };
  const maxReconnect = Math.max(
    0,
    ...scenario.campaigns.map((c) => c.spec.reconnectTimeoutMs ?? 0),
    scenario.rollout.plan?.template.reconnectTimeoutMs ?? 0,
  );
  const fleet = new SimFleet(
    {
      clock,
      queue,
      store,
      prng: createPrng(deriveSeed(seed, 3)),
      oldVersion: OLD,
      platform: PLATFORM,
      kick,
      up: () => controls.some((c) => c.alive),
      lateAfterMs: maxReconnect,
    },
    scenario.agents,
    TARGET.version,
  );
  const log = createLogger({ level: "silent" });
  const gates = new SimGates(clock, scenario.gateScripts);
  let processes = 0;
  const startControl = () => {
    const holder = `control-${++processes}`;
    const worker = createCampaignWorker({
      store,
      gateway: fleet,
      clock,
      log,
      holder,
      intervalMs: scenario.intervalMs,
      publicUrl: () => "http://control.sim",
      offlineAfterMs: scenario.offlineAfterMs,
      debounceMs: DEBOUNCE_MS,
      ...(scenario.rollout.kind === "none"
        ? {}
        : {
            fleet: { store: fleetStore, intervalMs: scenario.rollout.convergenceIntervalMs },
          }),
      gateProbe: gates,
    });
    controls.push({ holder, worker, unlisten: worker.listen(), nextAt: clock.ms, alive: true });
    say(`${holder} starts`);
  };
  startControl();
  if (options.faults) startControl();

  const pending: (() => Promise<void>)[] = [];
  const checks = newCheckState();
  const rolloutChecks = newRolloutCheckState();
  const plan = scenario.rollout.plan;
  if (plan !== undefined) {
    queue.at(plan.at, () => startPlan(fleetStore, plan, clock.ms, say));
  }
  const back = scenario.rollout.backwards;
  if (back !== undefined) {
    queue.at(back.at, () => {
      const d = backwardsDesired(back, { version: OLD, sequence: 1 }, clock.ms);
      fleetStore.tables.desired.set(d.id, d);
      say(`operator sets ${OLD} as the desired version of pool "${back.pool}" (${d.id})`);
    });
  }
  let started = 0;
  for (const plan of scenario.campaigns) {
    const start = async (): Promise<void> => {
      const candidates: Candidate[] = [];
      for (const row of store.tables.registry.values()) {
        const agent = fleet.agents.get(row.id);
        candidates.push({
          id: row.id,
          labels: agent?.script.labels ?? {},
          pool: row.pool,
          enabled: row.enabled,
          everConnected: row.last_seen !== null,
          capabilities: row.capabilities,
          agentVersion: row.agent_version,
        });
      }
      const spec = resolveSpec(plan.spec);
      const planned = planCampaign(
        spec,
        candidates.filter((c) => c.enabled && c.everConnected),
      );
      if (planned.totalNodes === 0) {
        started++;
        say(`${plan.id} not started: no node selected`);
        return;
      }
      const { campaign, nodes } = createCampaign({
        id: plan.id,
        spec,
        plan: planned,
        target: TARGET,
        now: clock.ms,
      });
      try {
        await store.transaction((tx) =>
          tx.insertCampaign({
            campaign,
            nodes,
            createdBy: "operator",
            createdByIp: "",
            now: clock.now(),
          }),
        );
      } catch {
        queue.at(clock.ms + 1000, () => pending.push(start));
        return;
      }
      started++;
      checks.members.set(plan.id, new Set(nodes.map((n) => n.nodeId)));
      say(`${plan.id} starts over ${nodes.length} nodes in ${campaign.batches.length} batches`);
      for (const c of controls) if (c.alive) c.worker.wake(plan.id);
      kick();
    };
    queue.at(plan.at, () => pending.push(start));
  }
  for (const action of scenario.operator) {
    queue.at(action.at, () => {
      if (action.kind === "disable") {
        const row = store.tables.registry.get(action.nodeId);
        if (row === undefined || !row.enabled) return;
        store.putNode({ ...row, enabled: false });
        checks.disabledAt.set(action.nodeId, clock.ms);
        say(`operator disables ${action.nodeId}`);
        return;
      }
      if (!store.tables.campaigns.has(action.campaignId)) return;
      store.tables.addCommand({
        campaignId: action.campaignId,
        kind: action.command.kind,
        rollback: action.command.kind === "abort" ? action.command.rollback : false,
        reason: "simulated operator",
        actor: "operator",
        actor_ip: "",
      });
      say(`operator: ${action.command.kind} ${action.campaignId}`);
      for (const c of controls) if (c.alive) c.worker.wake(action.campaignId);
      kick();
    });
  }
  for (const fault of scenario.faults) {
    queue.at(fault.at, () => {
      switch (fault.kind) {
        case "crash": {
          const leader =
            controls.find((c) => c.alive && c.worker.lease.epoch !== undefined) ??
            controls.find((c) => c.alive);
          if (leader === undefined) return;
          leader.alive = false;
          leader.unlisten();
          store.endSession(leader.holder);
          fleet.dropAll();
          say(`FAULT ${leader.holder} killed; a new process starts in ${fault.downMs} ms`);
          queue.at(clock.ms + fault.downMs, startControl);
          return;
        }
        case "lease_loss": {
          const row = store.tables.leases.get(WORKER_LEASE);
          if (row === undefined) return;
          row.holder = "someone-else";
          row.expiresAt = clock.ms - 1;
          say("FAULT the lease is lost");
          kick();
          return;
        }
        case "outage":
          store.outage(true);
          say(`FAULT the database is unreachable for ${fault.durationMs} ms`);
          queue.at(clock.ms + fault.durationMs, () => {
            store.outage(false);
            say("the database is back");
            kick();
          });
          return;
      }
    });
  }

  // The operator answers a campaign left paused (a breach with on_breach=pause, or a pause of
  // theirs without a resume) within PAUSE_ANSWER_MS: resume (accepting its failures) or abort.
  // Each answer depends only on the seed, the campaign and how many pauses of it were answered,
  // so faults that move a pause in time do not change what the operator answers.
  const answers = new Map<string, number>();
  const answerRoll = (campaignId: string): number => {
    const n = answers.get(campaignId) ?? 0;
    answers.set(campaignId, n + 1);
    const key = [...campaignId].reduce(
      (h, ch) => Math.imul(h ^ ch.charCodeAt(0), 16777619),
      2166136261,
    );
    return createPrng(deriveSeed(deriveSeed(seed, 4) ^ key, n)).next();
  };
  const pausedSince = new Map<string, number>();
  const answerPauses = () => {
    for (const [id, c] of store.tables.campaigns) {
      if (c.campaign.phase !== "paused") {
        pausedSince.delete(id);
        continue;
      }
      const since = pausedSince.get(id) ?? clock.ms;
      pausedSince.set(id, since);
      const waiting = store.tables.commands.some(
        (x) => x.campaignId === id && x.appliedAt === null,
      );
      if (waiting || clock.ms - since < PAUSE_ANSWER_MS) continue;
      const roll = answerRoll(id);
      const command =
        roll < 0.5
          ? ({ kind: "resume" } as const)
          : ({ kind: "abort", rollback: roll < 0.8 } as const);
      store.tables.addCommand({
        campaignId: id,
        kind: command.kind,
        rollback: command.kind === "abort" ? command.rollback : false,
        reason: "the operator answers a pause",
        actor: "operator",
        actor_ip: "",
      });
      pausedSince.delete(id);
      say(
        `operator answers the pause of ${id}: ${command.kind}${command.kind === "abort" && command.rollback ? " with rollback" : ""}`,
      );
      for (const ctl of controls) if (ctl.alive) ctl.worker.wake(id);
      kick();
    }
  };

  let steps = 0;
  let violation: RunResult["violation"];
  const snapshot = new Map<string, Map<string, string>>();
  const allDone = () =>
    started === scenario.campaigns.length &&
    [...store.tables.campaigns.values()].every((c) => c.campaign.finishedAt !== undefined) &&
    clock.ms >= scenario.rollout.settleUntil &&
    (plan === undefined || fleetStore.tables.plans.has(plan.id)) &&
    [...fleetStore.tables.plans.values()].every((p) => p.plan.phase !== "running");
  while (violation === undefined) {
    if (allDone()) break;
    const live = controls.filter((c) => c.alive);
    const times = [queue.next(), ...live.map((c) => c.nextAt)].filter(
      (t): t is number => t !== undefined,
    );
    if (times.length === 0) break;
    const now = Math.max(clock.ms, Math.min(...times));
    if (now > MAX_VIRTUAL_MS) break;
    clock.advanceTo(now);
    queue.runDue(now);
    while (pending.length > 0) await (pending.shift() as () => Promise<void>)();
    for (const c of controls) {
      if (!c.alive || c.nextAt > now) continue;
      const { next, busy } = await c.worker.step();
      if (!c.alive) continue;
      c.nextAt = busy ? now + DEBOUNCE_MS : Math.max(next, now + 1);
    }
    steps++;
    answerPauses();
    traceChanges(store, snapshot, say);
    // Campaigns the leader started itself (convergence, plan groups) select their nodes then.
    for (const [id, nodes] of store.tables.nodes)
      if (!checks.members.has(id)) checks.members.set(id, new Set(nodes.map((n) => n.nodeId)));
    const found = checkStep(store, fleet, checks, now);
    found.push(...rolloutViolations(store, fleetStore, fleet, rolloutChecks));
    found.push(
      ...gateViolations(
        gates,
        [...store.tables.campaigns.values()].map((c) => c.campaign),
      ),
    );
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
    const end = rolloutEndViolations(store, fleetStore, fleet);
    if (end.length > 0) violation = { step: steps, at: clock.ms, message: end.join("\n") };
  }
  for (const c of controls) c.unlisten();
  return {
    seed,
    faults: options.faults,
    steps,
    virtualMs: clock.ms,
    // Those the leader started itself (convergence, plan groups) included.
    campaigns: store.tables.campaigns.size,
    ...(violation === undefined ? {} : { violation }),
    trace,
    outcome: outcomeOf(store, fleet),
    scenario,
  };
}

/** Starts the scenario's plan as the admin API would. */
function startPlan(
  fleetStore: MemoryFleetStore,
  p: NonNullable<FleetScenario["rollout"]["plan"]>,
  now: number,
  say: (line: string) => void,
): void {
  const plan = createPlan({
    id: p.id,
    template: resolveSpec(p.template),
    groups: p.pools.map((pool) => ({
      name: pool,
      selector: { labels: {}, pools: [pool], nodeIds: [] },
    })),
    waitMs: p.waitMs,
    now,
    createdBy: "operator",
  });
  fleetStore.tables.plans.set(plan.id, { plan, version: 1 });
  say(`${plan.id} starts over ${p.pools.join(" → ")}, ${p.waitMs / 1000} s between groups`);
}
