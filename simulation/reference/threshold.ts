/**
 * Reference model of the failure threshold, written apart from `control/campaign/batch-rules.ts`:
 * a brute-force recount of a batch's nodes, and the breach found by counting up to the largest
 * number of failures the threshold allows.
 */

/** Node states that count as failures toward the threshold (SPEC §4: failed and timed out). */
export const REF_FAILURE_STATES: ReadonlySet<string> = new Set(["failed", "timed_out"]);

/** Node states that never change once set. */
export const REF_FINAL_STATES: ReadonlySet<string> = new Set([
  "succeeded",
  "failed",
  "timed_out",
  "skipped",
  "canceled",
  "rolled_back",
  "rollback_failed",
]);

/** Node states of a node holding or taking the upgrade. */
export const REF_UPGRADING_STATES: ReadonlySet<string> = new Set([
  "offered",
  "applying",
  "restarting",
  "verifying",
]);

/** Campaign phases after which nothing starts again. */
export const REF_ENDED_PHASES: ReadonlySet<string> = new Set([
  "completed",
  "rolled_back",
  "aborted",
  "failed",
]);

/** The failures and the offerable nodes (those not skipped) of a batch, counted one by one. */
export function refCount(states: readonly string[]): { failed: number; offerable: number } {
  let failed = 0;
  let offerable = 0;
  for (const s of states) {
    if (s !== "skipped") offerable += 1;
    if (REF_FAILURE_STATES.has(s)) failed += 1;
  }
  return { failed, offerable };
}

/** The most failures `thresholdPercent` of `offerable` nodes allows (k with k × 100 ≤ t × n). */
export function refAllowedFailures(offerable: number, thresholdPercent: number): number {
  let k = 0;
  while ((k + 1) * 100 <= thresholdPercent * offerable) k++;
  return k;
}

/**
 * Whether `failed` of `offerable` nodes breach: more failures than the threshold allows and
 * more than the operator accepted.
 */
export function refBreached(
  failed: number,
  offerable: number,
  thresholdPercent: number,
  accepted: number,
): boolean {
  return failed > refAllowedFailures(offerable, thresholdPercent) && failed > accepted;
}
