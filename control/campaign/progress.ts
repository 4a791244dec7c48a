/**
 * The progress deadline: a live campaign whose nodes and batches have not changed for its
 * deadline is stalled (a wedged rollout nobody notices otherwise). Stalling changes nothing in
 * the campaign — it never breaches, pauses or rolls back — the worker reports it (an audit row
 * and a metric) so an operator looks. Pure functions of the records and `now`.
 *
 * Time counts toward a stall only while the campaign is running or rolling back: a paused
 * campaign waits for its operator, not for progress, and time outside the campaign's
 * maintenance windows does not count (nothing may be offered then). A batch's paused time is
 * not counted either, so a resume starts no stall of its own.
 */

import type { CampaignNode, CampaignState } from "./model.js";
import type { CampaignSpec } from "./spec.js";
import { closedMsBetween } from "./windows.js";

/**
 * The deadline of a spec that names none: twice the reconnect timeout past the campaign's
 * longest wait, which is its longest batch minimum duration (or ramp step) plus its soak and,
 * with gates, their grace. 10-minute reconnects and 30-minute batches give 50 minutes.
 */
export function defaultProgressDeadlineMs(spec: CampaignSpec): number {
  let batchWait = Math.max(0, spec.ramp?.stepMs ?? 0);
  for (const b of spec.batches) batchWait = Math.max(batchWait, b.minDurationMs);
  const gateWait = (spec.gates?.length ?? 0) > 0 ? (spec.gateGraceMs ?? 0) : 0;
  return batchWait + spec.soakMs + gateWait + 2 * spec.reconnectTimeoutMs;
}

/** The campaign's progress deadline: its own, or {@link defaultProgressDeadlineMs}. */
export function progressDeadlineMs(spec: CampaignSpec): number {
  return spec.progressDeadlineMs ?? defaultProgressDeadlineMs(spec);
}

/**
 * The last progress of a campaign: the latest of its start, a node state change, a batch's
 * start or end, and the opening of a pause.
 */
export function lastProgressAt(c: CampaignState, nodes: readonly CampaignNode[]): number {
  let at = c.createdAt;
  for (const n of nodes) at = Math.max(at, n.stateChangedAt);
  for (const b of c.batches) at = Math.max(at, b.startedAt ?? at, b.endedAt ?? at);
  return Math.max(at, c.pausedAt ?? at);
}

/** A stalled campaign: since when nothing progressed, and for how long that counts. */
export interface Stall {
  /** Its last progress ({@link lastProgressAt}); one stall per value. */
  readonly since: number;
  /** The time since then that counts toward the deadline. */
  readonly stalledMs: number;
  readonly deadlineMs: number;
}

/**
 * The campaign's stall at `now`, or undefined while it progresses within its deadline, is
 * paused, or has ended (see the file's TSDoc for what counts).
 */
export function progressStall(
  c: CampaignState,
  nodes: readonly CampaignNode[],
  now: number,
): Stall | undefined {
  if (c.phase !== "running" && c.phase !== "rolling_back") return undefined;
  const since = lastProgressAt(c, nodes);
  const b = c.batches[c.currentBatch];
  const paused = Math.min(b?.pausedMs ?? 0, Math.max(0, now - since));
  const closed = c.phase === "running" ? closedMsBetween(c.spec.windows, since, now) : 0;
  const stalledMs = Math.max(0, now - since - paused - closed);
  const deadlineMs = progressDeadlineMs(c.spec);
  return stalledMs >= deadlineMs ? { since, stalledMs, deadlineMs } : undefined;
}
