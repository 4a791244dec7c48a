/**
 * What a simulated agent is scripted to do, and what it holds while it runs: its behaviour on an upgrade and on a rollback, its
 * timings, pool and labels. Chosen by the scenario from the seed.
 */
import type { Operation, OperationPhase } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentRecord } from "./ground-truth.js";

/** How an agent answers an upgrade. */
export type Behaviour =
  | "succeed"
  | "refuse"
  | "fail"
  | "never_return"
  | "late_return"
  | "revert"
  /**
   * Succeeds, comes back on the target, then reverts to its previous release by itself a while
   * later (`late-revert.ts`: during its batch's soak), once.
   */
  | "late_revert"
  | "config_fail"
  /**
   * Boots on the target, fails the release's health checks before it connects, and is
   * reverted by its supervisor: back on its old version, it reports FAILED health_check_failed.
   */
  | "health_fail"
  /** Enrolled, then gone for good before the campaign starts. */
  | "offline"
  | "flap"
  | "silent"
  | "crash_before_ack"
  | "dup_reports"
  | "no_cap"
  | "current"
  /**
   * Succeeds and comes back on the target, then its machine goes away for good
   * `vanishAfterMs` after that stream opened (a release that kills its host minutes after it
   * starts): it must never count as succeeded unless its batch passed before it went.
   */
  | "vanish_after_upgrade"
  /**
   * Its report disagrees with what it runs: it applies the upgrade and runs the target, reports
   * FAILED apply_failed, then restarts and says Hello on the target with a new boot.
   */
  | "fail_on_target";

/** How an agent answers a rollback. */
export type RollbackBehaviour = "reinstate" | "fail" | "silent";

/** One simulated agent's script. */
export interface AgentScript {
  readonly id: string;
  readonly pool: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly behaviour: Behaviour;
  readonly rollback: RollbackBehaviour;
  readonly stepMs: number;
  readonly restartMs: number;
  readonly configCapable: boolean;
  /** When it first connects (virtual ms). */
  readonly onlineAt: number;
  /** Its platform when not the fleet's (one the release may lack). */
  readonly platform?: string;
  /** The version it runs at first when not the fleet's (one no release registers), confirmed sequence 0. */
  readonly initialVersion?: string;
  /** Busy until this virtual time: it answers every upgrade offered before it DEFERRED. */
  readonly busyUntil?: number;
  /** A `vanish_after_upgrade` agent's machine goes away this long after it is back on the target. */
  readonly vanishAfterMs?: number;
}

/**
 * The capabilities an agent negotiates: `defer.v1` with `upgrade.v1` (a busy agent answers
 * DEFERRED, which Control honours only from a session that negotiated it).
 */
export function capabilitiesOf(s: AgentScript): string[] {
  if (s.behaviour === "no_cap") return [];
  const upgrade = ["upgrade.v1", "defer.v1"];
  return s.configCapable ? [...upgrade, "config.v1"] : upgrade;
}

/** An agent's report on one operation. */
export interface Report {
  phase: OperationPhase;
  version: string;
  code: string;
  message: string;
}

/** A simulated agent's state (durable across its restarts). */
export interface SimAgent {
  readonly script: AgentScript;
  version: string;
  previousVersion: string;
  confirmedSequence: number;
  boot: number;
  /** Its open stream's number, or 0 when it has none. */
  session: number;
  /** Last report per handled operation id. */
  readonly handled: Map<string, Report | undefined>;
  /** How many times each operation was applied (at most once: invariant I7). */
  readonly applied: Map<string, number>;
  /** Confirmed sequences over time (never decreasing: invariant I8). */
  readonly confirmedHistory: number[];
  /**
   * The sequence of each release it verified and installed, by version (as the real Agent's
   * `state.sequences`): a confirm raises the floor only to the running one's.
   */
  readonly sequences: Map<string, number>;
  restarting: boolean;
  crashedOnce: boolean;
  /** A `late_revert` agent has scheduled its revert (it reverts once). */
  lateReverted: boolean;
  /** A rollback whose REINSTATED is due once back. */
  pendingReinstate: string | undefined;
  /** An upgrade reverted for a failed health check, whose FAILED is due once back. */
  pendingFailure?: string | undefined;
  configBroken: boolean;
  /** True while an operation is being handled; later ones wait in `waiting` (lost on restart). */
  busy: boolean;
  waiting: Operation[];
  /** The ground truth of what it ran, was sent, received and reported (`ground-truth.ts`). */
  readonly record: AgentRecord;
  /**
   * The operation it is acting on (applying an upgrade, restarting for it, rolling back) and the
   * boot it began on; undefined while idle (`history.ts`: `act` and `idle`).
   */
  acting?: { readonly operationId: string; readonly boot: number } | undefined;
}
