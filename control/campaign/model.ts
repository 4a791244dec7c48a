/**
 * The campaign engine's data: plain readonly records that map one-to-one onto stored rows
 * (times are epoch milliseconds; `undefined` is SQL NULL), and the tagged unions of what flows
 * in (facts, commands) and out (actions, events) of {@link decide}.
 */
import { assertNever } from "./assert-never.js";
import type { GateStatus } from "./gates.js";
import type { NodeState } from "./node-state-traits.js";
import type { CampaignSpec } from "./spec.js";

export type {
  ConfigFailure,
  NodeFacts,
  ObservedPhase,
  ObservedReport,
  PoolLoad,
  SendFailure,
} from "./node-facts.js";

export type { NodeState } from "./node-state-traits.js";
export { isFailure, isFinal, isUpgrading, NODE_STATES } from "./node-state-traits.js";

/** The outcome of a final node's rollback: back on its previous version, or why not. */
/**
 * A final node's rollback outcome; rollback_withheld: never sent, its previous release was yanked
 * (it stays on the target, `rollback.ts`).
 */
export type RollbackResult =
  | "rolled_back"
  | "rollback_failed"
  | "rollback_unconfirmed"
  | "rollback_withheld";

/** Where a campaign stands (proto `CampaignPhase`); changes at the moment of the decision. */
export type CampaignPhase =
  | "running"
  | "paused"
  | "rolling_back"
  | "completed"
  | "rolled_back"
  | "aborted"
  | "failed";

/** Every campaign phase, in lifecycle order (a key per phase, or the build fails). */
export const CAMPAIGN_PHASES: readonly CampaignPhase[] = Object.keys({
  running: true,
  paused: true,
  rolling_back: true,
  completed: true,
  rolled_back: true,
  aborted: true,
  failed: true,
} satisfies Record<CampaignPhase, true>) as CampaignPhase[];

/** True for phases after which no offer, batch or rollback is started again. */
export function isEndedPhase(phase: CampaignPhase): boolean {
  switch (phase) {
    case "running":
    case "paused":
    case "rolling_back":
      return false;
    case "completed":
    case "rolled_back":
    case "aborted":
    case "failed":
      return true;
    default:
      return assertNever(phase, "campaign phase");
  }
}

/** Where one batch stands (proto `BatchState`). */
export type BatchState = "pending" | "running" | "passed" | "breached" | "rolled_back" | "canceled";

/**
 * The code of a node whose agent reported FAILED `health_check_failed`: the release's signed
 * health checks failed on the new version, and the agent reverted to its previous one.
 */
export const HEALTH_CHECK_FAILED = "health_check_failed";

/** Why a node ended as it did (empty while it is on its way). */
export type NodeCode =
  | "already_current"
  | "rejected"
  | "apply_failed"
  | "health_check_failed"
  | "reverted"
  | "config_apply_failed"
  | "offer_failed"
  | "reconnect_timeout"
  | "lost_after_upgrade"
  | "node_offline"
  | "node_disabled"
  | "node_revoked"
  | "upgrade_unsupported"
  | "platform_unsupported"
  | "ahead_of_target"
  | "deferred"
  | "batch_failed"
  | "aborted"
  | "rollback_failed"
  | "rollback_unconfirmed"
  /** Its rollback was withheld: its previous release is yanked, so it stays on the target. */
  | "rollback_withheld"
  /** Canceled because the campaign's target was yanked (SPEC §10). */
  | "release_yanked";

/**
 * Why a campaign stopped (empty while it runs or after it completed): a batch over its
 * threshold or failing a gate (batch_failed), the campaign over its failure budget
 * (max_failures_exceeded), a batch short of its minimum sample (min_canaries_unmet), its target
 * yanked (release_yanked), a rollback that did not come back, or an operator's abort.
 */
export type CampaignCode =
  | "batch_failed"
  | "max_failures_exceeded"
  | "min_canaries_unmet"
  | "release_yanked"
  | "rollback_failed"
  | "rollback_unconfirmed"
  | "aborted";

/** One batch of a campaign as stored. */
export interface BatchRecord {
  readonly index: number;
  readonly percent: number;
  readonly minDurationMs: number;
  readonly nodeCount: number;
  readonly state: BatchState;
  readonly startedAt: number | undefined;
  /** Paused time of this batch already closed by a resume (open pause: campaign `pausedAt`). */
  readonly pausedMs: number;
  /**
   * The part of `pausedMs` outside every maintenance window of the campaign: closed time already
   * left out as paused, so the minimum duration does not leave it out twice (`countedMs`).
   * Absent (a record from an earlier release): 0, and such time is left out twice.
   */
  readonly pausedClosedMs?: number | undefined;
  /** When its last node settled (final, or verifying past its config grace). */
  readonly settledAt: number | undefined;
  readonly endedAt: number | undefined;
  /** Failures an operator accepted by resuming after an on_breach=pause; a breach needs more. */
  readonly acceptedFailures: number;
  /**
   * Set by a resume after an on_breach=pause: gate results taken at or before it no longer
   * count (the operator accepted them), as `acceptedFailures` does for nodes.
   */
  readonly gatesAcceptedAt?: number | undefined;
  /** The passing result of each gate the batch passed on (with gates; set when it passed). */
  readonly gateEvidence?: readonly GateEvidence[] | undefined;
  /**
   * Gates (indexes, ascending) an operator skipped for this batch only: they count as holding
   * for it, and their results neither breach it nor hold it back. The next batch evaluates
   * every gate again.
   */
  readonly skippedGates?: readonly number[] | undefined;
}

/** One gate's passing result a batch passed on (invariant G1). */
export interface GateEvidence {
  readonly gate: number;
  readonly at: number;
  readonly value: string;
  /** True when an operator skipped the gate for the batch: `at` is then when the batch passed. */
  readonly skipped?: true | undefined;
}

/** Why the campaign is rolling back (or rolled back). */
export type RollbackCause = "breach" | "abort";

/** A campaign as stored (its batches may be a JSON column or rows of their own). */
export interface CampaignState {
  readonly id: string;
  readonly spec: CampaignSpec;
  readonly targetSequence: number;
  readonly phase: CampaignPhase;
  /** Index of the batch being run, or of the last one run. */
  readonly currentBatch: number;
  readonly batches: readonly BatchRecord[];
  readonly createdAt: number;
  /** Set while paused; the open pause is excluded from the current batch's elapsed time. */
  readonly pausedAt: number | undefined;
  readonly code: CampaignCode | undefined;
  readonly message: string | undefined;
  /** The node whose failure breached the batch, if any. */
  readonly stoppedByNodeId: string | undefined;
  readonly rollbackCause: RollbackCause | undefined;
  /** Set only when every node is final. */
  readonly finishedAt: number | undefined;
  /** The campaign this one retries, if any. */
  readonly retryOf: string | undefined;
}

/** One node of a campaign as stored. Fields about a stage stay set after it, as history. */
export interface CampaignNode {
  readonly nodeId: string;
  readonly batch: number;
  /** Position in canary order, over the whole campaign. */
  readonly order: number;
  /** Its pool ("" for none) for the disruption budget. */
  readonly pool: string;
  readonly state: NodeState;
  readonly code: NodeCode | undefined;
  readonly message: string | undefined;
  /** The version it ran when offered (or when judged already current); rollback target. */
  readonly previousVersion: string | undefined;
  /** The version it last came back on, once seen. */
  readonly version: string | undefined;
  readonly upgradeOperationId: string | undefined;
  readonly rollbackOperationId: string | undefined;
  readonly confirmOperationId: string | undefined;
  readonly offeredAt: number | undefined;
  /** Its boot id when offered: success needs a different one. */
  readonly offerBootId: string | undefined;
  /** offeredAt + reconnect timeout. */
  readonly reconnectDeadline: number | undefined;
  /** When it was first seen back on the target with a new boot id. */
  readonly backAt: number | undefined;
  readonly backBootId: string | undefined;
  /** backAt + config grace (backAt itself without config.v1). */
  readonly graceEndsAt: number | undefined;
  readonly rollbackAt: number | undefined;
  readonly rollbackBootId: string | undefined;
  /** rollbackAt + reconnect timeout. */
  readonly rollbackDeadline: number | undefined;
  /**
   * When the leader first judged the agent's RESTARTING on the rollback (its clock): the
   * rollback's deadline counts again from then (`rollbackDeadlineOf`). Absent: no such report.
   */
  readonly rollbackRestartedAt?: number | undefined;
  /**
   * A FINAL node sent its batch's rollback (its state kept): the rollback's outcome, recorded once
   * the rollback ends, so the node itself says whether it may still run the target. Absent on
   * every other node (a node rolling back says it by its own state).
   */
  readonly rollbackResult?: RollbackResult | undefined;
  /** When it first answered DEFERRED in this campaign (`deferral.ts`); absent: never. */
  readonly deferredAt?: number | undefined;
  /** A deferred waiting node is not offered again before this. */
  readonly deferRetryAt?: number | undefined;
  /** How many times it deferred. */
  readonly deferrals?: number | undefined;
  /**
   * The database's sequence number (`ObservedReport.seq`) of the DEFERRED answer it was last
   * judged on: a DEFERRED numbered above it answers a later offer (`deferral.ts`).
   */
  readonly deferredSeq?: number | undefined;
  /**
   * The batch it was planned into, once it was carried over from it (`deferral.ts`: still
   * deferring when the rest of that batch was ready to pass); `batch` is the batch it belongs to
   * now. Absent: it is in the batch it was planned into.
   */
  readonly carriedFrom?: number | undefined;
  /** A restarting node first seen back on another version (it may still report why). */
  readonly revertSeenAt?: number | undefined;
  /**
   * A verifying node first seen offline (`judge-away.ts`); cleared once it is online again. Not
   * back within the reconnect timeout of it: failed lost_after_upgrade.
   */
  readonly awaySince?: number | undefined;
  readonly stateChangedAt: number;
  /** When it reached a final state. */
  readonly finishedAt: number | undefined;
}

/** The capability that makes a node upgradable. */
export const CAP_UPGRADE = "upgrade.v1";
/** The capability that makes a node report ConfigStatus. */
export const CAP_CONFIG = "config.v1";

/** The release a campaign pushes. */
export interface Target {
  readonly version: string;
  readonly sequence: number;
  /**
   * The platforms the release carries an artifact for: a waiting node whose known platform is
   * not among them is skipped `platform_unsupported` when the offering reaches it (its platform
   * may have changed since the start). Absent: not known (no node is judged on it).
   */
  readonly platforms?: readonly string[] | undefined;
}

/** An operation to put in the outbox and send to one Agent. */
export type Action =
  | {
      readonly kind: "upgrade";
      readonly nodeId: string;
      readonly operationId: string;
      readonly version: string;
      readonly sequence: number;
    }
  | {
      readonly kind: "rollback";
      readonly nodeId: string;
      readonly operationId: string;
      /** The version the Agent is expected to come back on. */
      readonly version: string | undefined;
      readonly reason: string;
      /**
       * A late rollback (`late-rollback.ts`): left in the outbox when its batch's rollback ended
       * for a node that was sent none. Never sent with its decision: the outbox delivers it only
       * once the node's latest Hello is on the target, and only under its pool's budget.
       */
      readonly late?: true;
    }
  | {
      readonly kind: "confirm";
      readonly nodeId: string;
      readonly operationId: string;
      readonly version: string;
      readonly sequence: number;
    };

/** Kinds of operation a campaign sends. */
export type ActionKind = Action["kind"];

/** An administrator's command, applied at the start of a decision. */
export type AdminCommand =
  | { readonly kind: "pause"; readonly reason?: string | undefined }
  | { readonly kind: "resume"; readonly reason?: string | undefined }
  | { readonly kind: "abort"; readonly rollback: boolean; readonly reason?: string | undefined }
  | {
      readonly kind: "skip_gate";
      /** The gate's index in the spec (the CLI and audit log count from 1). */
      readonly gate: number;
      readonly reason?: string | undefined;
    };

/** Campaign-level happenings of one decision, for the audit log and watchers. */
export type CampaignEvent =
  | { readonly kind: "phase_changed"; readonly from: CampaignPhase; readonly to: CampaignPhase }
  | { readonly kind: "batch_started"; readonly batch: number }
  | {
      readonly kind: "batch_passed";
      readonly batch: number;
      /** How many deferring nodes it carried over to later batches (absent: none). */
      readonly carriedOver?: number | undefined;
    }
  | {
      readonly kind: "breached";
      readonly batch: number;
      readonly failed: number;
      readonly offerable: number;
      readonly stoppedByNodeId: string | undefined;
      /** The gate whose failure breached it (its index), when a gate did. */
      readonly gate?: number | undefined;
      /** The campaign-level reason, when it was not the batch's threshold or a gate. */
      readonly code?: "release_yanked" | "max_failures_exceeded" | "min_canaries_unmet" | undefined;
    }
  | { readonly kind: "rollback_started"; readonly batch: number; readonly cause: RollbackCause }
  | {
      /** A gate's result the decision acted on: one that breached the batch, or each passing
       * result a batch passed on. */
      readonly kind: "gate";
      readonly batch: number;
      readonly gate: number;
      readonly label: string;
      readonly status: GateStatus;
      readonly value: string;
      readonly message: string;
    }
  | { readonly kind: "command_applied"; readonly command: AdminCommand }
  | { readonly kind: "command_ignored"; readonly command: AdminCommand; readonly why: string }
  | {
      readonly kind: "finished";
      readonly phase: CampaignPhase;
      /** The batch rolled back, every node confirmed back (a breach's or an abort's rollback). */
      readonly rolledBackBatch?: number | undefined;
    };
