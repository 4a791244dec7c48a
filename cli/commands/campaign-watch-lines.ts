/**
 * When `campaign watch` writes a line off a terminal (a log, CI, a pipe; `--json` likewise):
 * Control streams an update per decision that changed the campaign (about 24,000 for 10,000
 * nodes). As `kubectl rollout status` does, a line is written on each change of the campaign's
 * state (phase, a batch's state, its finish) at once, and on each change of its node counts,
 * at most one line per {@link PROGRESS_EVERY_MS} while only counts move; the counts a burst ends
 * on are written when that second is over ({@link pendingDueMs}), so the log never stays behind.
 */
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatCounts, stopReason } from "./campaign-format.js";

/** At most one progress line per this long while only the counts change. */
export const PROGRESS_EVERY_MS = 1_000;

/** What was last written: the campaign's state, its counts, and when. */
export interface Written {
  readonly state: string;
  readonly counts: string;
  readonly atMs: number;
}

/**
 * The campaign's state as one comparable string: phase, current batch, every batch's state,
 * why it stopped, and whether it finished (every node final). Node counts are not part of it.
 */
export function campaignState(c: Campaign): string {
  return [
    c.phase,
    c.currentBatch,
    c.batches.map((b) => b.state).join(","),
    stopReason(c) ?? "",
    c.finishedAt === undefined ? "" : "finished",
  ].join("|");
}

/**
 * What to remember when `campaign` is worth a line after `last` (undefined: nothing written
 * yet) at `nowMs`, else undefined: a line for the first update, for every state change, and
 * for moved counts once {@link PROGRESS_EVERY_MS} passed since the last line.
 */
export function lineWorthy(
  last: Written | undefined,
  campaign: Campaign,
  nowMs: number,
): Written | undefined {
  const next = {
    state: campaignState(campaign),
    counts: formatCounts(campaign.counts),
    atMs: nowMs,
  };
  if (last === undefined || last.state !== next.state) return next;
  if (last.counts !== next.counts && nowMs - last.atMs >= PROGRESS_EVERY_MS) return next;
  return undefined;
}

/**
 * When the latest update `campaign`, held back by {@link lineWorthy}, is due as a line of its
 * own (epoch ms): a second after `last` when its counts differ from what was written; undefined
 * when it holds nothing new.
 */
export function pendingDueMs(last: Written | undefined, campaign: Campaign): number | undefined {
  if (last === undefined) return undefined;
  if (last.state !== campaignState(campaign)) return last.atMs;
  if (last.counts === formatCounts(campaign.counts)) return undefined;
  return last.atMs + PROGRESS_EVERY_MS;
}
