/**
 * The mark a decision leaves for the next one, so that one judges only what may have moved
 * since (see `DecideInput.judgedSince`).
 */

/**
 * What a decision that reached its fixpoint vouches for: at `at`, under `context` (everything
 * besides a node's own record and facts that judging it reads: the campaign's phase, its
 * current batch and that batch's state, the target, when the deciding Control became ready and
 * the timeouts), judging any active node again changed nothing. Opaque to callers: they keep
 * it with the records that decision wrote and hand it back with the next decision.
 */
export interface JudgedMark {
  /** The decision's `now` (epoch ms). */
  readonly at: number;
  /** The judging context, as a key compared for equality only. */
  readonly context: string;
}
