/**
 * What operation handling needs: the {@link OperationHost} an agent offers (its state,
 * trust, downloads, stream and queue) and the {@link Applier} that turns a verified
 * operation into an effect.
 */
import type { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { DownloadResult } from "./download.js";
import type { DurableState, ReportedState } from "./durable-state.js";
import type { AgentLog } from "./log.js";
import type { AcceptedUpgrade, ReleaseVerifier } from "./release-check.js";
import type { TrustState } from "./trust-state.js";
import type { TufCheck } from "./tuf-check.js";

/** Why the agent restarts: the version it comes back on is already in its durable state. */
export type RestartKind = "upgrade" | "rollback";

/** A failure an applier reports (FAILED or REFUSED with this code and message). */
export interface ApplyFailure {
  readonly code: string;
  readonly message: string;
}

/** The outcome of one apply step: undefined when it took effect. */
export type ApplyOutcome = ApplyFailure | undefined;

/**
 * What turns a verified operation into an effect. Each method changes `host.state`
 * (version, previous version) as its effect requires; the core persists and reports.
 */
export interface Applier {
  /** A refusal decided before anything is verified (e.g. the agent refuses upgrades). */
  refuseUpgrade(): ApplyOutcome;
  /**
   * Installs `upgrade` over `from` and switches to it; `bytes` are the downloaded, verified
   * artifact (undefined when the host does not download). On success the core reports
   * RESTARTING and restarts the agent.
   */
  applyUpgrade(
    opId: string,
    from: string,
    upgrade: AcceptedUpgrade,
    bytes?: Uint8Array,
  ): Promise<ApplyOutcome>;
  /**
   * Why a rollback to `to` cannot be applied (e.g. its files are gone), asked before it is
   * accepted: the rollback is then reported FAILED with it and nothing changes. Absent or
   * undefined: it can.
   */
  checkRollback?(to: string): Promise<ApplyOutcome>;
  /** Switches back from `from` to `to` (the previous version); the core then restarts. */
  applyRollback(opId: string, from: string, to: string): Promise<ApplyOutcome>;
  /** Makes `version` permanent (the confirmed sequence is already raised in the state). */
  applyConfirm(opId: string, version: string): Promise<void>;
}

/** What to fetch: the signed artifact of the accepted upgrade. */
export type ArtifactRequest = AcceptedUpgrade["artifact"];

/** What operation handling needs from its agent. */
export interface OperationHost {
  readonly platform: string;
  readonly state: DurableState;
  /** Aborted when the agent stops. */
  readonly signal: AbortSignal;
  readonly log: AgentLog;
  /** The release pins and threshold this agent trusts, and the verifier that applies them. */
  readonly trust: {
    readonly verifier: ReleaseVerifier;
    readonly pins: readonly string[];
    readonly threshold: number;
    /** The release channel's TUF metadata must list the release too (when configured). */
    readonly tuf?: TufCheck | undefined;
  };
  /** Pause between the phases of an upgrade (0 in production). */
  readonly stepMs: number;
  readonly applier: Applier;
  /** An upgrade is in progress. */
  busy: boolean;
  /** A restart was decided and the agent has not started again yet. */
  readonly restarting: boolean;
  /**
   * Downloads `artifact` (at most its size); undefined when this host does not download
   * and trusts the operation's size and sha256.
   */
  fetch(artifact: ArtifactRequest, signal: AbortSignal): Promise<DownloadResult> | undefined;
  /** Sends an ObservedState on the current stream, if any. */
  send(opId: string, report: ReportedState): void;
  /** Saves the durable state (coalesced; resolves once written). */
  persist(): Promise<void>;
  /** Counts one application of `opId` (the effect, not the delivery). */
  countApplication(opId: string): void;
  /** Counts one redelivery that was answered from memory. */
  countDuplicate(): void;
  /**
   * Told when a TUF check moved the agent between frozen and not frozen (the state is
   * already in `state.trust`); absent: nothing beyond the durable state is told.
   */
  trustChanged?(state: TrustState): void;
  /** Ends the stream gracefully and restarts the agent (new boot id). */
  restart(kind: RestartKind): void;
  /** Runs `task` after every task enqueued before it (operations apply one at a time). */
  enqueue(task: () => Promise<void>): Promise<void>;
  /**
   * Why the node cannot take an upgrade now (it answers DEFERRED with this reason), or
   * undefined when it can; absent: it never defers.
   */
  deferral?(): Promise<string | undefined>;
  /**
   * Whether the session's Welcome included `defer.v1`. False: a busy node refuses the upgrade
   * `defer_unsupported` instead of answering a DEFERRED that Control did not agree to; absent:
   * as true (hosts that negotiate nothing of their own).
   */
  deferNegotiated?(): boolean;
}

/** Records and sends one report of an operation (durably first). */
export type Reporter = (
  phase: OperationPhase,
  version: string,
  code?: string,
  message?: string,
) => Promise<void>;
