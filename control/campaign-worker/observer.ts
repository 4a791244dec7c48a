/**
 * What the campaign worker tells an observer (Control's metrics): how each decision ended and
 * how long it took, the campaign events it committed, and whether this process leads. The
 * worker calls it synchronously; an observer must not throw or block.
 */
import type { CampaignEvent } from "../campaign/index.js";

/**
 * How one decision ended: `committed` (written, or nothing to write), `conflict` (another
 * writer changed the campaign first; decided again), `not_leader` (the lease was lost; nothing
 * written) or `failed` (an error; retried after an interval).
 */
export type DecisionResult = "committed" | "conflict" | "not_leader" | "failed";

/** Told of the worker's decisions and leadership; see the file's TSDoc. */
export interface WorkerObserver {
  /** A decision ended with `result` after `seconds`; `events` are those it committed. */
  decided(result: DecisionResult, seconds: number, events: readonly CampaignEvent[]): void;
  /** Whether this process leads, after each turn of the loop. */
  leading(leading: boolean): void;
  /** A burst of failures halted the convergence of desired version `desiredId`. */
  convergenceHalted?(desiredId: string): void;
  /**
   * Whether live campaign `campaignId` is stalled (past its progress deadline), after each of
   * its decisions; false once it progressed, finished, or this process stopped leading.
   */
  stalled?(campaignId: string, stalled: boolean): void;
  /**
   * This leader steps aside from live campaign `campaignId`: it records the engine `features`
   * this Control does not know, so a Control that knows them must lead it; undefined once it no
   * longer does (the campaign finished, or this process stopped leading).
   */
  steppedAside?(campaignId: string, features: readonly string[] | undefined): void;
}
