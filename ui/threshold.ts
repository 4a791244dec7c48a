/**
 * Where a batch stands against its failure threshold, judged as the campaign engine judges
 * it (control/campaign/batch-rules.ts `isBreached`): a batch breaches when
 * `failed × 100 > threshold × offerable`. Pure, and free of the DOM, so it is tested in Node.
 */
import type { BatchStatus } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** A batch's standing: its failed share, the failures it may have, and how many more breach it. */
export interface ThresholdStanding {
  /** Failed share of the offerable nodes, in percent. */
  readonly ratio: number;
  /** The most failures the batch may have without breaching. */
  readonly allowed: number;
  readonly breached: boolean;
  /** How many more failures breach it (0 once breached). */
  readonly left: number;
}

/** The standing of `batch` against `thresholdPercent`. */
export function thresholdStanding(batch: BatchStatus, thresholdPercent: number): ThresholdStanding {
  const ratio = batch.offerable > 0 ? (100 * batch.failed) / batch.offerable : 0;
  const allowed = Math.floor((thresholdPercent * batch.offerable) / 100);
  return {
    ratio,
    allowed,
    breached: batch.failed > allowed,
    left: Math.max(0, allowed - batch.failed + 1),
  };
}
