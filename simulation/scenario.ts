/**
 * A seeded scenario's base: the fleet (pools, labels, each agent's behaviour and timings), the
 * campaigns started over it (selectors, batches, thresholds, on_breach, timeouts) and the
 * operator's commands and node disables. The registered units (`unit-registry.ts`) vary it: the
 * agent and campaign stages through {@link BaseStages}, the rest after (`generator.ts`), the
 * faults among them. Everything derives from the seed alone.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { AdminCommand, CampaignSpecInput } from "../control/campaign/index.js";
import type { AgentScript, Behaviour, RollbackBehaviour } from "./agent-script.js";
import type { YankPlan } from "./budget-scenario.js";
import type { GateScript } from "./schedules.js";

/** One campaign to start. */
export interface CampaignPlan {
  readonly id: string;
  readonly at: number;
  readonly spec: CampaignSpecInput;
}

/** A fault of Control or its database. */
export type Fault =
  | { readonly kind: "crash"; readonly at: number; readonly downMs: number }
  | { readonly kind: "lease_loss"; readonly at: number }
  | { readonly kind: "outage"; readonly at: number; readonly durationMs: number };

/**
 * A fault timed from a campaign's gate's first evaluation for `batch`, `afterMs` later: every
 * Control process crashes and Control is down for `downMs` (`down`), or the lease is lost.
 */
export type GateFault =
  | {
      readonly kind: "down";
      readonly campaignId: string;
      readonly batch: number;
      readonly gate: number;
      readonly afterMs: number;
      readonly downMs: number;
    }
  | {
      readonly kind: "lease_loss";
      readonly campaignId: string;
      readonly batch: number;
      readonly gate: number;
      readonly afterMs: number;
    };

/** An operator's action. */
export type OperatorAction =
  | {
      readonly kind: "command";
      readonly at: number;
      readonly campaignId: string;
      readonly command: AdminCommand;
    }
  | { readonly kind: "disable"; readonly at: number; readonly nodeId: string }
  /** Disables the `count` nodes the campaign would offer next (`disable-next.ts`). */
  | {
      readonly kind: "disable_next";
      readonly at: number;
      readonly campaignId: string;
      readonly count: number;
    };

/** How the Controls' clocks of a run are off the reference clock (`clock-faults.ts`). */
export interface ClockSkew {
  /** The offset of the k-th Control started (k modulo the list's length), ms. */
  readonly offsetsMs: readonly number[];
  /** A step of the clock of the Control started `control`-th (0-based), at reference time `at`. */
  readonly step?: { readonly control: number; readonly at: number; readonly byMs: number };
}

/** A whole scenario. */
export interface Scenario {
  readonly seed: number;
  readonly agents: readonly AgentScript[];
  readonly campaigns: readonly CampaignPlan[];
  readonly operator: readonly OperatorAction[];
  readonly faults: readonly Fault[];
  /** Faults timed from a gate's first evaluation (`gate-takeovers.ts`); with faults only. */
  readonly gateFaults?: readonly GateFault[];
  readonly offlineAfterMs: number;
  readonly intervalMs: number;
  /** Only timing-free behaviours and no operator: faults must not change the outcome (I9). */
  readonly calm: boolean;
  /** The simulated gates' scripts of the campaigns with gates (`schedules.ts`), by campaign id. */
  readonly gateScripts: ReadonlyMap<string, readonly GateScript[]>;
  /** A scenario on a breach's edge ({@link edgeOf}): its fleet must stay as drawn. */
  readonly edge?: boolean;
  /** Yanks of the target release by the operator (`budget-scenario.ts`); absent: none. */
  readonly yanks?: readonly YankPlan[] | undefined;
  /**
   * Control down across a late revert during a soak (`soak-takeovers.ts`): every Control process
   * crashes {@link SoakTakeover.leadMs} before the first `late_revert` agent reverts and stays
   * down for `downMs`; with faults only.
   */
  readonly soakTakeover?: SoakTakeover | undefined;
  /**
   * A rollback decided across a takeover while a final node is away (`late-rollback.ts`): the
   * campaign and its late node; with faults only.
   */
  readonly lateRollback?: { readonly campaignId: string; readonly nodeId: string } | undefined;
  /**
   * A previous release's Control leads for a while (`old-control.ts`): at `at` every Control
   * process crashes and one that knows fewer engine features starts alone; `leadMs` later it is
   * stopped and as many current ones start. With faults only.
   */
  readonly oldControl?: { readonly at: number; readonly leadMs: number } | undefined;
  /**
   * Controls whose clocks are off the reference clock (`clock-faults.ts`). With faults only;
   * absent: every Control runs on the reference clock.
   */
  readonly clockSkew?: ClockSkew | undefined;
  /**
   * Single database calls that fail (`db-errors.ts`): each call of the store fails with this
   * probability, half before it writes and half after its commit. With faults only; absent: none.
   */
  readonly dbErrors?: { readonly rate: number } | undefined;
  /**
   * The virtual time the run starts at, epoch ms (`dst-days.ts`: shortly before a daylight-saving
   * change of 2026); every time of the scenario is already shifted by it. Absent: 0.
   */
  readonly originMs?: number | undefined;
}

/** Control down across a late revert (see {@link Scenario.soakTakeover}). */
export interface SoakTakeover {
  readonly campaignId: string;
  readonly leadMs: number;
  readonly downMs: number;
}

const MIN = 60_000;

function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[Math.floor(prng.next() * items.length)] as T;
}

function int(prng: Prng, lo: number, hi: number): number {
  return lo + Math.floor(prng.next() * (hi - lo + 1));
}

const BEHAVIOURS: readonly [Behaviour, number][] = [
  ["succeed", 60],
  ["refuse", 3],
  ["fail", 3],
  ["never_return", 2],
  ["late_return", 2],
  ["revert", 2],
  ["config_fail", 2],
  ["offline", 3],
  ["flap", 4],
  ["silent", 1],
  ["crash_before_ack", 3],
  ["dup_reports", 5],
  ["no_cap", 2],
  ["current", 3],
];

/**
 * Behaviours whose outcome does not depend on when things happen: a calm scenario uses only
 * these, so its outcome with faults must equal its outcome without (I9).
 */
export const TIMING_FREE: ReadonlySet<Behaviour> = new Set([
  "succeed",
  "refuse",
  "fail",
  "revert",
  "health_fail",
  "crash_before_ack",
  "dup_reports",
  "no_cap",
  "current",
]);

function behaviour(prng: Prng, failureBias: number, calm: boolean): Behaviour {
  const weights = BEHAVIOURS.filter(([b]) => !calm || TIMING_FREE.has(b)).map(
    ([b, w]) => [b, b === "succeed" ? w : w * failureBias] as const,
  );
  const total = weights.reduce((s, [, w]) => s + w, 0);
  let x = prng.next() * total;
  for (const [b, w] of weights) {
    x -= w;
    if (x < 0) return b;
  }
  return "succeed";
}

/** The share of scenarios that sit on a breach's edge (see {@link edgeOf}). */
const EDGE_SHARE = 0.2;

/**
 * A scenario on the edge of a breach: one campaign of one batch whose failures are exactly at
 * its threshold while every node counts, and over it once the nodes that went away are
 * skipped — the batch must breach, never pass. Calm: its outcome does not depend on timing.
 */
function edgeOf(
  prng: Prng,
  agents: AgentScript[],
  base: CampaignPlan,
  budget: number,
): Pick<Scenario, "agents" | "campaigns" | "operator" | "calm" | "edge"> {
  const threshold = pick(prng, [5, 10, 20, 25]);
  const size = Math.max(agents.length, Math.ceil(100 / threshold) + 2);
  const failures = Math.floor((threshold * size) / 100);
  const gone = Math.floor(size - (failures * 100) / threshold) + 1;
  const scripts: AgentScript[] = [];
  for (let i = 0; i < size; i++) {
    const template = agents[i % agents.length] as AgentScript;
    const behaviour: Behaviour =
      i < failures
        ? pick(prng, ["refuse", "fail"] as const)
        : i < failures + gone
          ? "offline"
          : "succeed";
    scripts.push({
      ...template,
      rollback: "reinstate",
      stepMs: Math.min(template.stepMs, 2000),
      restartMs: Math.min(template.restartMs, 15_000),
      id: `node-${String(i).padStart(3, "0")}`,
      labels: { group: "0" },
      behaviour,
      onlineAt: int(prng, 0, 2400),
    });
  }
  return {
    agents: scripts,
    campaigns: [
      {
        id: "c0",
        at: base.at,
        spec: {
          ...base.spec,
          batches: [{ percent: 100, minDurationMs: 0 }],
          failureThresholdPercent: threshold,
          soakMs: 0,
          disruptionBudgetPercent: budget,
        },
      },
    ],
    operator: [],
    calm: true,
    edge: true,
  };
}

/** What a campaign-stage unit (`units.ts`) makes of one campaign's spec. */
export interface CampaignVariation {
  readonly spec: CampaignSpecInput;
  /** Scripts of the simulated gates it gave the campaign, by gate index (none: unchanged). */
  readonly gateScripts?: readonly GateScript[];
}

/** The agent and campaign stages of the registered units, as {@link scenarioOf} applies them. */
export interface BaseStages {
  /** Varies the drawn agents (before a breach's-edge scenario copies them). */
  readonly agents: (agents: readonly AgentScript[]) => AgentScript[];
  /** Varies the `index`-th campaign's spec (not on a breach's edge). */
  readonly campaign: (index: number, spec: CampaignSpecInput) => CampaignVariation;
}

/**
 * Builds the base scenario of `seed` (no faults, no yanks: units add them), with the agent and
 * campaign stages of `stages`.
 */
export function scenarioOf(seed: number, stages: BaseStages): Scenario {
  const prng = createPrng(deriveSeed(seed, 1));
  const size = int(prng, 3, 40);
  const failureBias = pick(prng, [0, 0.3, 1, 2, 4]);
  const pools = pick(prng, [[""], ["a", "b"], ["a", "b", "c", ""]]);
  const groups = int(prng, 1, 3);
  // A calm scenario's outcome does not depend on timing: I9 compares it with and without faults.
  const calm = prng.next() < 0.4;
  const drawn: AgentScript[] = [];
  for (let i = 0; i < size; i++) {
    const rollback: RollbackBehaviour =
      calm || prng.next() < 0.9 ? "reinstate" : pick(prng, ["fail", "silent"] as const);
    drawn.push({
      id: `node-${String(i).padStart(3, "0")}`,
      pool: pick(prng, pools),
      labels: { group: String(i % groups), ...(prng.next() < 0.1 ? { canary: "true" } : {}) },
      behaviour: behaviour(prng, failureBias, calm),
      rollback,
      // A calm agent is never near a timeout (1 minute at least): 4 steps, a restart, a
      // reconnect and an outage fit in it, so only Control's faults could make it time out.
      stepMs: int(prng, 50, calm ? 2000 : 3000),
      restartMs: int(prng, 500, calm ? 15_000 : 40_000),
      configCapable: prng.next() < 0.5,
      onlineAt: !calm && prng.next() < 0.2 ? int(prng, 0, 5 * MIN) : int(prng, 0, 2400),
    });
  }
  // The agent-stage units (health checks, busy agents, …: seed streams of their own).
  const agents = stages.agents(drawn);
  const budget = pick(prng, [5, 20, 50, 100]);
  const campaigns: CampaignPlan[] = [];
  for (let g = 0; g < groups; g++) {
    const shape = pick(prng, [
      [100],
      [50, 100],
      [5, 25, 100],
      [20, 60, 100],
      [10, 20, 40, 80, 100],
    ]);
    campaigns.push({
      id: `c${g}`,
      at: 3000 + g * int(prng, 0, 3 * MIN),
      spec: {
        targetVersion: "2.0.0",
        selector: { labels: { group: String(g) } },
        batches: shape.map((percent) => ({ percent, minDurationMs: int(prng, 0, 4) * MIN })),
        failureThresholdPercent: pick(prng, [0, 5, 10, 20, 34, 50]),
        concurrency: pick(prng, [0, 0, 1, 2, 5]),
        onBreach: pick(prng, ["rollback", "rollback", "pause", "stop"] as const),
        reconnectTimeoutMs: int(prng, 1, 5) * MIN,
        configGraceMs: pick(prng, [0, 10_000, 60_000]),
        soakMs: pick(prng, [0, 0, 30_000]),
        disruptionBudgetPercent: budget,
      },
    });
  }
  const operator: OperatorAction[] = [];
  const commands = calm ? 0 : int(prng, 0, 2);
  for (let k = 0; k < commands; k++) {
    const c = pick(prng, campaigns);
    const at = c.at + int(prng, 0, 20 * MIN);
    const kind = pick(prng, ["pause", "abort", "abort_rollback"] as const);
    if (kind === "pause") {
      operator.push({ kind: "command", at, campaignId: c.id, command: { kind: "pause" } });
      operator.push({
        kind: "command",
        at: at + int(prng, 1, 10) * MIN,
        campaignId: c.id,
        command: { kind: "resume" },
      });
    } else {
      operator.push({
        kind: "command",
        at,
        campaignId: c.id,
        command: { kind: "abort", rollback: kind === "abort_rollback" },
      });
    }
  }
  if (!calm && prng.next() < 0.3 && agents.length > 0) {
    operator.push({ kind: "disable", at: int(prng, 0, 30 * MIN), nodeId: pick(prng, agents).id });
  }
  operator.sort((a, b) => a.at - b.at);
  if (prng.next() < EDGE_SHARE) {
    return {
      ...edgeOf(prng, agents, campaigns[0] as CampaignPlan, budget),
      seed,
      faults: [],
      offlineAfterMs: pick(prng, [30_000, 120_000]),
      intervalMs: 5000,
      gateScripts: new Map(),
    };
  }
  // The campaign-stage units (windows, ramps, gates, limits, …: seed streams of their own).
  const gateScripts = new Map<string, readonly GateScript[]>();
  const scheduled = campaigns.map((c, i) => {
    const v = stages.campaign(i, c.spec);
    if (v.gateScripts !== undefined && v.gateScripts.length > 0)
      gateScripts.set(c.id, v.gateScripts);
    return { ...c, spec: v.spec };
  });
  return {
    seed,
    agents,
    campaigns: scheduled,
    gateScripts,
    operator,
    faults: [],
    calm,
    offlineAfterMs: pick(prng, [30_000, 120_000]),
    intervalMs: 5000,
  };
}

/**
 * The Control and database faults of `seed`'s run with faults (a seed stream of its own): one to
 * six leader crashes, lost leases and database outages, after the first campaign started.
 */
export function controlFaultsOf(seed: number): Fault[] {
  const faultList: Fault[] = [];
  const fp = createPrng(deriveSeed(seed, 2));
  const count = int(fp, 1, 6);
  for (let k = 0; k < count; k++) {
    // After the first campaign started: a fault before it would change who is a candidate.
    const at = int(fp, 4000, fp.next() < 0.8 ? 10 * MIN : 60 * MIN);
    const kind = pick(fp, ["crash", "crash", "lease_loss", "outage"] as const);
    if (kind === "crash")
      faultList.push({ kind, at, downMs: int(fp, 200, fp.next() < 0.7 ? 20_000 : 180_000) });
    else if (kind === "lease_loss") faultList.push({ kind, at });
    else faultList.push({ kind, at, durationMs: int(fp, 500, 30_000) });
  }
  return faultList.sort((a, b) => a.at - b.at);
}
