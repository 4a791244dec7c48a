/**
 * Database errors the memory store can be made to raise, for the simulation: an outage (every
 * call fails while it lasts) and single calls that fail, either before anything was written (a
 * statement refused: a serialization failure, a deadlock, a statement timeout) or after their
 * write applied (the connection lost once COMMIT was sent: the caller cannot tell whether it
 * applied). Control must survive both: retry what failed, and never count a write twice or lose
 * one because a call said it failed.
 */

/** Any error the memory store raises to stand for a database fault. */
export class StoreFaultError extends Error {}

/** The error every call of a store in outage rejects with. */
export class StoreOutageError extends StoreFaultError {
  override readonly name = "StoreOutageError";
}

/** The error of one call that an injected database error struck. */
export class StoreCallError extends StoreFaultError {
  override readonly name = "StoreCallError";
}

/**
 * Where an injected error strikes one call: `before` anything is written (nothing applied), or
 * `after_commit` (its writes applied, and the caller is told it failed).
 */
export type StoreFault = "before" | "after_commit";

/** The store's calls an injected error may strike. */
export type StoreCallName =
  | "transaction"
  | "liveCampaignIds"
  | "openNodeIds"
  | "recordFacts"
  | "unackedOperations"
  | "markSent"
  | "recordGateResult"
  | "liveCampaignOfNodes"
  | "notify";

/** Decides, for each call, whether an error strikes it and where; undefined: it runs as usual. */
export type StoreFaultInjector = (call: StoreCallName) => StoreFault | undefined;

/** The error for `call` struck at `fault`. */
export function injectedError(call: StoreCallName, fault: StoreFault): StoreCallError {
  return new StoreCallError(
    fault === "before"
      ? `${call}: the database refused the statement (could not serialize access)`
      : `${call}: the connection was lost after COMMIT was sent; the write may have applied`,
  );
}
