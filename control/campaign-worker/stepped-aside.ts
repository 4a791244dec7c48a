/**
 * The live campaigns a leader steps aside from because they record engine features it does
 * not know (docs/decisions.md, "Versioned engine features"): each is told to the observer once
 * when it is first stepped aside from and once when it no longer is (decided again, finished
 * elsewhere, or leadership lost), and logged once while this process leads.
 */
import type { Logger } from "../log.js";
import type { WorkerObserver } from "./observer.js";

/** The campaigns stepped aside from, with the features this Control lacks for each. */
export class SteppedAside {
  readonly #aside = new Map<string, readonly string[]>();
  readonly #observer: WorkerObserver | undefined;
  readonly #log: Logger;
  readonly #known: readonly string[];

  constructor(observer: WorkerObserver | undefined, log: Logger, known: readonly string[]) {
    this.#observer = observer;
    this.#log = log;
    this.#known = known;
  }

  /** Records that `campaignId` is stepped aside from; tells and logs it the first time only. */
  enter(campaignId: string, features: readonly string[]): void {
    if (this.#aside.has(campaignId)) return;
    this.#aside.set(campaignId, features);
    this.#observer?.steppedAside?.(campaignId, features);
    this.#log.warn(
      { campaignId, unknownFeatures: features, knownFeatures: this.#known },
      "this Control steps aside from a campaign that uses engine features it does not know (a Control of a newer release must lead it); it keeps leading the others",
    );
  }

  /** `campaignId` was decided: it is no longer stepped aside from. */
  leave(campaignId: string): void {
    if (this.#aside.delete(campaignId)) this.#observer?.steppedAside?.(campaignId, undefined);
  }

  /** Forgets the campaigns stepped aside from that are not in `live` (finished elsewhere). */
  prune(live: readonly string[]): void {
    if (this.#aside.size === 0) return;
    const still = new Set(live);
    for (const id of [...this.#aside.keys()]) if (!still.has(id)) this.leave(id);
  }

  /** Forgets them all (leadership lost). */
  clear(): void {
    for (const id of [...this.#aside.keys()]) this.leave(id);
  }
}
