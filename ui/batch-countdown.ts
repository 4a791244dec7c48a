/**
 * The time left of a running batch, as its row on the campaign page shows it, read from the
 * same GetCampaignWaits answer as the page's "Waits for" list (and `agentctl campaign why`):
 * its minimum duration counts only while the campaign runs and a window is open, so a closed
 * window or a pause is said, never a countdown that runs through them. Pure, and free of the
 * DOM, so it is tested in Node.
 */
import { BatchState, type BatchStatus } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import type { GetCampaignWaitsResponse } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { formatMs, msOf } from "./format.js";

/** What {@link batchCountdown} reads. */
export interface CountdownInput {
  readonly batch: BatchStatus;
  /** The latest waits of the campaign (undefined while loading and once it is finished). */
  readonly waits: GetCampaignWaitsResponse | undefined;
  /** Milliseconds since `waits` arrived (the browser's clock), to count down between reads. */
  readonly sinceWaitsMs: number;
}

/**
 * The batch's countdown: empty unless it is the running batch the waits were judged for;
 * otherwise the closed window's sentence (when it opens) and the pause, with the minimum
 * duration left (counted down between reads only while neither holds it); "minimum duration
 * reached" once the waits name no minimum duration and no closed window.
 */
export function batchCountdown({ batch, waits, sinceWaitsMs }: CountdownInput): string {
  if (batch.state !== BatchState.RUNNING) return "";
  if (waits === undefined || waits.currentBatch !== batch.index) return "";
  const of = (kind: string) => waits.waits.find((w) => w.kind === kind);
  const window = of("window_closed");
  const paused = of("paused");
  const min = of("min_duration");
  const parts: string[] = [];
  if (window) parts.push(window.text);
  if (min) {
    const stopped = window !== undefined || paused !== undefined;
    const left = msOf(min.left) - (stopped ? 0 : sinceWaitsMs);
    const total = formatMs(msOf(batch.minDuration));
    if (left > 0 || stopped) {
      parts.push(`${formatMs(left)} of ${total} left${paused ? " (paused)" : ""}`);
    } else {
      parts.push("minimum duration reached");
    }
  } else if (!window) {
    parts.push("minimum duration reached");
  }
  return parts.join("; ");
}
