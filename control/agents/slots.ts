/**
 * A counting limit, for the streams a Control holds and the handshakes in progress: at most
 * `limit` holders at once, acquired without waiting (a refusal is the caller's to answer).
 */
export class Slots {
  #held = 0;

  /** @param limit holders allowed at once (≥ 1). */
  constructor(readonly limit: number) {}

  /** Holders now. */
  get held(): number {
    return this.#held;
  }

  /** Takes a slot; false (and nothing taken) when all `limit` are held. */
  tryAcquire(): boolean {
    if (this.#held >= this.limit) return false;
    this.#held += 1;
    return true;
  }

  /** Gives back a slot taken by {@link Slots.tryAcquire}; call once per successful acquire. */
  release(): void {
    if (this.#held > 0) this.#held -= 1;
  }
}
