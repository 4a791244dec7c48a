/**
 * How the dashboard words the admin API's values: enum names, times, durations and counts.
 * Pure functions of the messages.
 */
import { type Duration, durationMs, type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  BatchState,
  type Campaign,
  CampaignPhase,
  NodeState,
  type NodeStateCount,
} from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** The failure threshold Control applies when a campaign sets none. */
export const DEFAULT_THRESHOLD_PERCENT = 5;

/** Phases after which a campaign never changes phase again. */
export const FINAL_PHASES: ReadonlySet<CampaignPhase> = new Set([
  CampaignPhase.COMPLETED,
  CampaignPhase.ROLLED_BACK,
  CampaignPhase.ABORTED,
  CampaignPhase.FAILED,
]);

/** Node states a batch counts as failed (toward its threshold). */
export const FAILED_STATES: readonly NodeState[] = [
  NodeState.FAILED,
  NodeState.TIMED_OUT,
  NodeState.ROLLBACK_FAILED,
];

/** Node states between the offer and the verdict. */
export const IN_FLIGHT_STATES: readonly NodeState[] = [
  NodeState.OFFERED,
  NodeState.APPLYING,
  NodeState.RESTARTING,
  NodeState.VERIFYING,
  NodeState.ROLLING_BACK,
];

/** Node states that end a node's part without an upgrade or a failure. */
export const SKIPPED_STATES: readonly NodeState[] = [
  NodeState.SKIPPED,
  NodeState.CANCELED,
  NodeState.ROLLED_BACK,
];

const lower = (name: string | undefined): string => (name ?? "unknown").toLowerCase();

/** `running`, `rolled_back`, … */
export const phaseName = (phase: CampaignPhase): string => lower(CampaignPhase[phase]);
/** `waiting`, `timed_out`, … */
export const stateName = (state: NodeState): string => lower(NodeState[state]);
/** `pending`, `passed`, … */
export const batchStateName = (state: BatchState): string => lower(BatchState[state]);

/** The sum of the counts of `states`. */
export function countIn(counts: readonly NodeStateCount[], states: readonly NodeState[]): number {
  return counts.filter((c) => states.includes(c.state)).reduce((sum, c) => sum + c.count, 0);
}

/** The failure threshold a campaign runs with, in percent. */
export function thresholdOf(campaign: Campaign): number {
  return campaign.spec?.failureThresholdPercent ?? DEFAULT_THRESHOLD_PERCENT;
}

/** True once the campaign's phase is final and every node is final. */
export function isFinished(campaign: Campaign): boolean {
  return FINAL_PHASES.has(campaign.phase) && campaign.finishedAt !== undefined;
}

/**
 * A timestamp as the browser's local `YYYY-MM-DD HH:MM:SS` followed by its zone (`UTC`, or
 * its offset such as `UTC+01:00`), so a time is never read in the wrong zone; `-` when unset.
 */
export function formatTime(ts: Timestamp | undefined): string {
  if (!ts) return "-";
  const d = timestampDate(ts);
  const pad = (n: number) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const zone =
    offset === 0
      ? "UTC"
      : `UTC${offset < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
}

/** Milliseconds as `1h2m`, `3m4s` or `5s`. */
export function formatMs(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${s % 60}s`;
  return `${s}s`;
}

/** A duration message in milliseconds (0 when unset). */
export function msOf(duration: Duration | undefined): number {
  return duration ? durationMs(duration) : 0;
}

/** Non-zero counts as `succeeded 3 · applying 1`, in the order of the node states. */
export function formatCounts(counts: readonly NodeStateCount[]): string {
  const text = [...counts]
    .filter((c) => c.count > 0)
    .sort((a, b) => a.state - b.state)
    .map((c) => `${stateName(c.state)} ${c.count}`)
    .join(" · ");
  return text === "" ? "-" : text;
}
