/**
 * How many agent handshakes (connect → Welcome) a Control takes on at once. A handshake
 * Control cannot finish before the Agent stops waiting for its Welcome (30 s) is worse than
 * one refused: its work is done for nothing, and the Agent retries. A fixed cap cannot know
 * that: on a Control starved of CPU or of its database, 512 handshakes at once may take
 * minutes, and then every one is abandoned and none welcomed. So the admission follows the
 * rate handshakes finish at (Little's law): at most what finishes within `targetMs` at the
 * rate seen over the last `windowMs` of busy time, never fewer than `minConcurrent` (so a
 * Control that has seen none yet still starts) and never more than `maxConcurrent`. Only welcomed
 * handshakes count towards the rate, so a flood of bad tokens cannot raise it. A refused
 * Agent retries with backoff; each one admitted is answered in time.
 *
 * The rate is measured on a clock that runs only while a handshake is held: a quiet spell says
 * nothing of how fast Control finishes handshakes, so the batch of agents that restart after
 * an hour without a handshake is admitted at the rate last measured, not at the minimum (which
 * would refuse most of them into seconds of backoff). Time held without a welcome still ages
 * the rate, so a Control that became slow while quiet admits less within a window of work.
 */

/**
 * The admission Control runs with, under `limits.maxConcurrentHandshakes`: a handshake may
 * expect its turn within 10 s, a third of the 30 s an Agent waits for its Welcome; the rate
 * is measured over 5 s; 64 are admitted whatever the rate, so a Control that just started
 * admits at once and doubles what it admits with every round of handshakes it welcomes. A
 * handshake is admitted only once its credential verified (stream-bounds.ts), so a flood of
 * forged credentials holds no slot, and a holder of one join token holds only its few.
 */
export const HANDSHAKE_ADMISSION = { minConcurrent: 64, targetMs: 10_000, windowMs: 5_000 };

/** Options of {@link HandshakeAdmission}. */
export interface HandshakeAdmissionOptions {
  /** Handshakes at once, at most (`limits.maxConcurrentHandshakes`). */
  readonly maxConcurrent: number;
  /** Handshakes at once, at least: admitted whatever the rate (1 to `maxConcurrent`). */
  readonly minConcurrent: number;
  /** How long an admitted handshake may expect to wait for its turn, in ms (> 0, finite). */
  readonly targetMs: number;
  /** Over how long the finishing rate is measured, in ms (> 0, finite). */
  readonly windowMs: number;
  /** The time now, in epoch ms (Control's Clock). */
  readonly now: () => number;
}

/** The admission of agent handshakes; see the file's TSDoc. */
export class HandshakeAdmission {
  #held = 0;
  /** When recent handshakes were welcomed on the busy clock, oldest first, from `#head` on. */
  #welcomedAt: number[] = [];
  /** Busy time: milliseconds with a handshake held, as last read. */
  #busy = 0;
  /** The Clock's epoch ms when busy time was last read; meaningful while one is held. */
  #busyRead = 0;
  #head = 0;
  readonly #keep: number;

  /** @throws RangeError when an option is out of its range. */
  constructor(private readonly o: HandshakeAdmissionOptions) {
    if (!Number.isInteger(o.maxConcurrent) || o.maxConcurrent < 1) {
      throw new RangeError(`maxConcurrent must be a positive integer, got ${o.maxConcurrent}`);
    }
    if (
      !Number.isInteger(o.minConcurrent) ||
      o.minConcurrent < 1 ||
      o.minConcurrent > o.maxConcurrent
    ) {
      throw new RangeError(
        `minConcurrent must be an integer from 1 to maxConcurrent (${o.maxConcurrent}), got ${o.minConcurrent}`,
      );
    }
    if (!(o.targetMs > 0 && Number.isFinite(o.targetMs))) {
      throw new RangeError(`targetMs must be positive and finite, got ${o.targetMs}`);
    }
    if (!(o.windowMs > 0 && Number.isFinite(o.windowMs))) {
      throw new RangeError(`windowMs must be positive and finite, got ${o.windowMs}`);
    }
    // Welcomes beyond this many can only confirm the cap: not kept.
    this.#keep = Math.ceil((o.maxConcurrent * o.windowMs) / o.targetMs);
  }

  /** Handshakes in progress. */
  get held(): number {
    return this.#held;
  }

  /** How many handshakes may be in progress now. */
  get limit(): number {
    const times = this.#welcomedAt;
    const since = this.#busyNow() - this.o.windowMs;
    while (this.#head < times.length && (times[this.#head] as number) < since) this.#head += 1;
    this.#compact();
    const recent = this.#welcomedAt.length - this.#head;
    const inTarget = Math.ceil((recent * this.o.targetMs) / this.o.windowMs);
    return Math.min(this.o.maxConcurrent, Math.max(this.o.minConcurrent, inTarget));
  }

  /** Takes on a handshake; false (and nothing taken) when {@link limit} are in progress. */
  tryAcquire(): boolean {
    if (this.#held >= this.limit) return false;
    if (this.#held === 0) this.#busyRead = this.o.now();
    this.#held += 1;
    return true;
  }

  /**
   * A handshake taken on by {@link tryAcquire} ended; once per acquire. Only a welcomed one
   * counts towards the rate: refusals (a bad token, a stream silent until the Hello timeout)
   * cost Control little and say nothing of how fast it welcomes.
   */
  release(welcomed = true): void {
    if (this.#held === 0) return;
    const busy = this.#busyNow();
    this.#held -= 1;
    if (!welcomed) return;
    this.#welcomedAt.push(busy);
    if (this.#welcomedAt.length - this.#head > this.#keep) this.#head += 1;
    this.#compact();
  }

  /**
   * Milliseconds with a handshake held, ever: the sum of the Clock's steps forward between
   * reads while one is held, so never decreasing; a clock set back adds nothing and counts on
   * from its new now; a clock set forward counts the step as busy, and ages the rate by it.
   */
  #busyNow(): number {
    if (this.#held > 0) {
      const now = this.o.now();
      if (now > this.#busyRead) this.#busy += now - this.#busyRead;
      this.#busyRead = now;
    }
    return this.#busy;
  }

  /** Drops the expired head once it is the larger part of the array (amortized O(1)). */
  #compact(): void {
    if (this.#head > 64 && this.#head * 2 > this.#welcomedAt.length) {
      this.#welcomedAt = this.#welcomedAt.slice(this.#head);
      this.#head = 0;
    }
  }
}
