/**
 * What a decision's draft keeps so that a round judges only what may have moved since the
 * last one (internal to decide; read and renewed by `judge-since.ts`, set from the caller's
 * `DecideInput.judgedSince` by `decide.ts`, touched by every node update in `draft.ts`).
 */
import type { JudgedMark } from "./judged-mark.js";

/** A draft's incremental-judging bookkeeping; see the file's TSDoc. */
export interface IncrementalJudging {
  /**
   * The mark under which every active node not in `touched`, not in `factsSince` and without a
   * deadline since was last judged with no change (`judge-since.ts`); undefined: judge every
   * active node. Stays undefined for a whole decision that was given no mark (the full path).
   */
  judgedUnder: JudgedMark | undefined;
  /** The nodes whose facts may have changed since `judgedUnder` (the caller's, then none). */
  factsSince: ReadonlySet<string>;
  /** Positions of the records changed since the active nodes were last judged. */
  readonly touched: Set<number>;
}

/** The bookkeeping of a draft given no mark: every active node is judged. */
export function noJudgedMark(): IncrementalJudging {
  return { judgedUnder: undefined, factsSince: new Set(), touched: new Set() };
}
