/**
 * Conversions between the engine's records and database rows. The engine's records are
 * stored whole as JSON (times in epoch ms, `undefined` omitted) next to a few copied
 * columns for queries; reading rebuilds every field, absent ones as `undefined`. Fields this
 * release does not know are left out of what it reads, and kept where it writes (`writes.ts`).
 */
import type {
  AdminCommand,
  CampaignNode,
  CampaignState,
  ConfigFailure,
  ObservedPhase,
  ObservedReport,
  SendFailure,
} from "../campaign/index.js";

/**
 * Every field of a node record this release knows. The SQL store merges a record it writes into
 * the stored one, keeping the fields outside this list (a newer release's).
 */
export const NODE_KEYS: readonly (keyof CampaignNode)[] = [
  "nodeId",
  "batch",
  "order",
  "pool",
  "state",
  "code",
  "message",
  "previousVersion",
  "version",
  "upgradeOperationId",
  "rollbackOperationId",
  "confirmOperationId",
  "offeredAt",
  "offerBootId",
  "reconnectDeadline",
  "backAt",
  "backBootId",
  "graceEndsAt",
  "rollbackAt",
  "rollbackBootId",
  "rollbackDeadline",
  "rollbackRestartedAt",
  "rollbackResult",
  "deferredAt",
  "deferRetryAt",
  "deferrals",
  "deferredSeq",
  "carriedFrom",
  "revertSeenAt",
  "awaySince",
  "stateChangedAt",
  "finishedAt",
];

/** Every field of a campaign record this release knows (see {@link NODE_KEYS}). */
export const CAMPAIGN_KEYS: readonly (keyof CampaignState)[] = [
  "id",
  "spec",
  "targetSequence",
  "phase",
  "currentBatch",
  "batches",
  "createdAt",
  "pausedAt",
  "code",
  "message",
  "stoppedByNodeId",
  "rollbackCause",
  "finishedAt",
  "retryOf",
];

function rebuild<T>(keys: readonly (keyof T)[], json: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key as string] = json[key as string] ?? undefined;
  return out as T;
}

/** A node record from its stored JSON; every field present, absent ones `undefined`. */
export function nodeFromJson(json: Record<string, unknown>): CampaignNode {
  return rebuild<CampaignNode>(NODE_KEYS, json);
}

/** A campaign record from its stored JSON; every field present, absent ones `undefined`. */
export function campaignFromJson(json: Record<string, unknown>): CampaignState {
  const c = rebuild<CampaignState>(CAMPAIGN_KEYS, json);
  return {
    ...c,
    batches: c.batches.map((b) => ({
      ...b,
      startedAt: b.startedAt ?? undefined,
      settledAt: b.settledAt ?? undefined,
      endedAt: b.endedAt ?? undefined,
    })),
  };
}

/** Epoch ms → Date, or null. */
export function dateOrNull(ms: number | undefined): Date | null {
  return ms === undefined ? null : new Date(ms);
}

/** A row of `campaign_operations` as the worker reads it for facts. */
export interface OperationFactRow {
  id: string;
  node_id: string;
  report_phase: string | null;
  report_code: string | null;
  report_message: string | null;
  report_version: string | null;
  report_at: Date | null;
  /** The boot id of the session the report arrived on. */
  report_boot_id: string | null;
  /**
   * The database's number of the report (`ObservedReport.seq`): every report a store keeps takes
   * the next one, whichever Control wrote it. PostgreSQL hands a bigint over as a string. Null
   * when written by a release that did not number reports.
   */
  report_seq: string | number | null;
  failed_at: Date | null;
  failure: string | null;
}

const PHASES = new Set<ObservedPhase>([
  "ACCEPTED",
  "REFUSED",
  "DOWNLOADING",
  "VERIFYING",
  "APPLYING",
  "RESTARTING",
  "FAILED",
  "REINSTATED",
  "CONFIRMED",
  "DEFERRED",
]);

/** True for the phase names the engine knows. */
export function isObservedPhase(phase: string): phase is ObservedPhase {
  return PHASES.has(phase as ObservedPhase);
}

/** The report stored on an outbox row, if any. */
export function reportOf(row: OperationFactRow): ObservedReport | undefined {
  if (row.report_phase === null || !isObservedPhase(row.report_phase)) return undefined;
  return {
    operationId: row.id,
    phase: row.report_phase,
    version: row.report_version ?? "",
    code: row.report_code ?? "",
    message: row.report_message ?? "",
    at: row.report_at?.getTime() ?? 0,
    bootId: row.report_boot_id ?? undefined,
    seq: row.report_seq === null ? undefined : Number(row.report_seq),
  };
}

/** The send failure stored on an outbox row, if any. */
export function sendFailureOf(row: OperationFactRow): SendFailure | undefined {
  if (row.failed_at === null) return undefined;
  return { operationId: row.id, at: row.failed_at.getTime(), message: row.failure ?? "" };
}

/** A row of `campaign_config_failures`. */
export interface ConfigFailureRow {
  node_id: string;
  at: Date;
  boot_id: string | null;
  message: string;
}

/** The engine's view of a stored config failure. */
export function configFailureOf(row: ConfigFailureRow): ConfigFailure {
  return { at: row.at.getTime(), bootId: row.boot_id ?? undefined, message: row.message };
}

/** A pending administrator command as stored. */
export interface CommandRow {
  id: string;
  kind: string;
  rollback: boolean;
  /** The gate index of a `skip_gate` command; null (or absent) for other kinds. */
  gate?: number | null;
  reason: string;
  actor: string;
  actor_ip: string;
}

/** The engine's command for a stored one, or undefined for an unknown kind. */
export function commandOf(row: CommandRow): AdminCommand | undefined {
  switch (row.kind) {
    case "pause":
    case "resume":
      return { kind: row.kind, reason: row.reason };
    case "abort":
      return { kind: "abort", rollback: row.rollback, reason: row.reason };
    case "skip_gate":
      return row.gate === null || row.gate === undefined
        ? undefined
        : { kind: "skip_gate", gate: row.gate, reason: row.reason };
    default:
      return undefined;
  }
}
