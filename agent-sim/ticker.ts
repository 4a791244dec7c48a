/**
 * One shared ticker per fleet instead of a timer per agent: every `periodMs` it calls
 * `onTick(now)` on each registered agent, which then sends its due heartbeat, flaps, or
 * reports a late ConfigStatus. Ten thousand agents cost one interval, not ten thousand.
 */

/** Something the ticker drives; `onTick` must be cheap and must not throw. */
export interface Tickable {
  onTick(now: number): void;
}

/** A fleet-wide ticker; runs only while something is registered. */
export class Ticker {
  readonly #periodMs: number;
  readonly #members = new Set<Tickable>();
  #timer: NodeJS.Timeout | undefined;

  /** @param periodMs how often members are visited (the heartbeat resolution). */
  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  /** Starts visiting `member` at the next tick; idempotent. */
  add(member: Tickable): void {
    this.#members.add(member);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#periodMs);
      this.#timer.unref();
    }
  }

  /** Stops visiting `member`; idempotent. */
  remove(member: Tickable): void {
    this.#members.delete(member);
    if (this.#members.size === 0) this.stop();
  }

  /** Stops the ticker and forgets every member. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#members.clear();
  }

  #tick(): void {
    const now = Date.now();
    for (const member of this.#members) member.onTick(now);
  }
}

/**
 * Limits new connections to `perSecond` across the fleet (the `--connect-rate` flag):
 * each `acquire` waits for the next free slot, so a starting fleet ramps up instead of
 * arriving all at once.
 */
export class ConnectLimiter {
  readonly #gapMs: number;
  #nextSlot = 0;

  /** @param perSecond maximum new connections per second (> 0). */
  constructor(perSecond: number) {
    this.#gapMs = 1000 / perSecond;
  }

  /** The delay in ms the caller must wait before connecting; reserves that slot. */
  reserve(now = Date.now()): number {
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#gapMs;
    return slot - now;
  }
}
