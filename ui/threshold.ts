/**
 * Where a batch stands against its failure threshold, judged as the campaign engine judges
 * it (control/campaign/batch-rules.ts `isBreached`): a batch breaches when
 * `failed × 100 > threshold × offerable` and its failures exceed those an operator accepted by
 * resuming after its breach (`acceptedFailures`). Pure, and free of the DOM, so it is tested in
 * Node.
 */
import { BatchState, type BatchStatus } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** A batch's standing: its failed share, the failures it may have, and how many more breach it. */
export interface ThresholdStanding {
  /** Failed share of the offerable nodes, in percent. */
  readonly ratio: number;
  /** The most failures the threshold allows the batch without breaching. */
  readonly allowed: number;
  readonly breached: boolean;
  /** How many more failures breach it (0 once breached). */
  readonly left: number;
}

/** The standing of `batch` against `thresholdPercent`. */
export function thresholdStanding(batch: BatchStatus, thresholdPercent: number): ThresholdStanding {
  const ratio = batch.offerable > 0 ? (100 * batch.failed) / batch.offerable : 0;
  const allowed = Math.floor((thresholdPercent * batch.offerable) / 100);
  const accepted = batch.acceptedFailures;
  return {
    ratio,
    allowed,
    breached: batch.failed > allowed && batch.failed > accepted,
    left: Math.max(0, Math.max(allowed, accepted) + 1 - batch.failed),
  };
}

function more(left: number): string {
  return `${left} more failure${left === 1 ? "" : "s"} breach${left === 1 ? "es" : ""} it`;
}

/**
 * The gauge's words for `batch`: its failures against the threshold, then what they mean for
 * it now: how many more breach a batch still being judged, "passed" for one that passed (never
 * how many more would breach it), and the failures an operator accepted by resuming.
 */
export function thresholdText(batch: BatchStatus, thresholdPercent: number): string {
  const { ratio, allowed, breached, left } = thresholdStanding(batch, thresholdPercent);
  const failed = `${batch.failed} of ${batch.offerable} failed (${ratio.toFixed(1)}%)`;
  if (breached) return `${failed}: over the ${thresholdPercent}% threshold`;
  const against =
    batch.failed > allowed
      ? `over the ${thresholdPercent}% threshold`
      : `threshold ${thresholdPercent}%`;
  const accepted = batch.acceptedFailures;
  const resumed = `${accepted} accepted at resume`;
  if (batch.state === BatchState.PASSED)
    return `${failed}, ${against}: ${accepted > 0 ? `passed after resume (${resumed})` : "passed"}`;
  if (batch.state === BatchState.ROLLED_BACK) return `${failed}, ${against}: rolled back`;
  return `${failed}, ${against}: ${accepted > 0 ? `${resumed}, ` : ""}${more(left)}`;
}
