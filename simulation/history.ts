/**
 * The run's one typed history: what the simulated actors did, appended in virtual-time order as
 * it happens — each agent (the operations that reached it, when it began and stopped acting on
 * one, the versions it ran, the streams it opened, its machine going away) and the simulated
 * operator (disables). The checkers of the registry (`checker-registry.ts`) fold over it, as a
 * Jepsen checker reads the history its clients observed; none asks Control what happened for a
 * fact an agent can tell. (`ground-truth.ts` keeps the same facts per agent, for the checkers
 * that read them by node.)
 */
import type { OperationKind } from "./ground-truth.js";

/** One thing an actor did, at virtual time `at`. */
export type HistoryEvent =
  /** An operation reached the agent (re-deliveries included). */
  | {
      readonly kind: "received";
      readonly at: number;
      readonly nodeId: string;
      readonly operationId: string;
      readonly campaignId: string;
      readonly operation: OperationKind;
      readonly version: string;
    }
  /**
   * The agent began to act on an operation Control sent it — fetching and applying an upgrade,
   * restarting for one, or rolling back — and is disrupted until its `idle`.
   */
  | {
      readonly kind: "act";
      readonly at: number;
      readonly nodeId: string;
      readonly pool: string;
      readonly operationId: string;
      readonly campaignId: string;
      readonly action: "upgrade" | "rollback";
    }
  /** The agent stopped acting: it answered with a result, or is back on a stream after its restart. */
  | {
      readonly kind: "idle";
      readonly at: number;
      readonly nodeId: string;
      readonly operationId: string;
    }
  /** The agent started to run `version`. */
  | { readonly kind: "run"; readonly at: number; readonly nodeId: string; readonly version: string }
  /** The agent opened a stream. */
  | {
      readonly kind: "connect";
      readonly at: number;
      readonly nodeId: string;
      readonly boot: number;
      readonly version: string;
    }
  /** The agent's machine went away for good (no stream will come from it again). */
  | { readonly kind: "gone"; readonly at: number; readonly nodeId: string }
  /** The operator disabled the node. */
  | { readonly kind: "disable"; readonly at: number; readonly nodeId: string };

/** An append-only history, read by position: a checker remembers how far it has folded. */
export class History {
  readonly #events: HistoryEvent[] = [];

  /** Appends `event` (its `at` is never before the last one's: the actors run in time order). */
  append(event: HistoryEvent): void {
    this.#events.push(event);
  }

  /** How many events there are. */
  get length(): number {
    return this.#events.length;
  }

  /** The events from position `from` on (a copy). */
  since(from: number): readonly HistoryEvent[] {
    return this.#events.slice(from);
  }

  /** Every event. */
  all(): readonly HistoryEvent[] {
    return this.#events;
  }
}

/** A reader that yields each event once: the events appended since its last call. */
export function historyReader(history: History): () => readonly HistoryEvent[] {
  let read = 0;
  return () => {
    const fresh = history.since(read);
    read = history.length;
    return fresh;
  };
}
