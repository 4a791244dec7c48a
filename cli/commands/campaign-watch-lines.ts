/**
 * When `campaign watch` writes a line off a terminal (a log, CI, a pipe; `--json` likewise):
 * Control streams an update per node change (about 24,000 for 10,000 nodes), and a log needs
 * the campaign's story, as `kubectl rollout status` tells it: a line when the campaign's phase
 * or a batch's state changes, when it finishes, and, while a batch runs long, one progress line
 * a minute at most when its counts moved (so a quiet log is not mistaken for a hung watch).
 */
import type { Campaign } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatCounts, stopReason } from "./campaign-format.js";

/** At most one progress line per this long while no state changes. */
export const PROGRESS_EVERY_MS = 60_000;

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
