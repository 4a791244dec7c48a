/**
 * How many agent handshakes (connect → Welcome) a Control takes on at once. A handshake
 * Control cannot finish before the Agent stops waiting for its Welcome (30 s) is worse than
 * one refused: its work is done for nothing, and the Agent retries. A fixed cap cannot know
 * that: on a Control starved of CPU or of its database, 512 handshakes at once may take
 * minutes, and then every one is abandoned and none welcomed. So the admission follows the
 * rate handshakes finish at (Little's law): at most what finishes within `targetMs` at the
 * rate seen over the last `windowMs`, never fewer than `minConcurrent` (so a Control that
 * has seen none yet still starts) and never more than `maxConcurrent`. A refused Agent
 * retries with backoff; each one admitted is answered in time.
 */

/**
 * The admission Control runs with, under `limits.maxConcurrentHandshakes`: a handshake may
 * expect its turn within 10 s, a third of the 30 s an Agent waits for its Welcome; the rate
 * is measured over 5 s; 32 are admitted whatever the rate, so a Control that just started
 * admits at once and doubles what it admits with every round of handshakes it finishes.
 */
export const HANDSHAKE_ADMISSION = { minConcurrent: 32, targetMs: 10_000, windowMs: 5_000 };

/** Options of {@link HandshakeAdmission}. */
export interface HandshakeAdmissionOptions {
  /** Handshakes at once, at most (`limits.maxConcurrentHandshakes`). */
  readonly maxConcurrent: number;
  /** Handshakes at once, at least: admitted whatever the rate (1 to `maxConcurrent`). */
  readonly minConcurrent: number;
  /** How long an admitted handshake may expect to wait for its turn, in ms (> 0). */
  readonly targetMs: number;
  /** Over how long the finishing rate is measured, in ms (> 0). */
  readonly windowMs: number;
  /** The time now, in epoch ms (Control's Clock). */
  readonly now: () => number;
}

/** The admission of agent handshakes; see the file's TSDoc. Same contract as `Slots`. */
export class HandshakeAdmission {
  #held = 0;
  /** When recent handshakes finished, oldest first; at most what the cap needs. */
  readonly #finished: number[] = [];
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
    if (!(o.targetMs > 0)) throw new RangeError(`targetMs must be positive, got ${o.targetMs}`);
    if (!(o.windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${o.windowMs}`);
    // Finishing times beyond this many can only confirm the cap: not kept.
    this.#keep = Math.ceil((o.maxConcurrent * o.windowMs) / o.targetMs);
  }

  /** Handshakes in progress. */
  get held(): number {
    return this.#held;
  }

  /** How many handshakes may be in progress now. */
  get limit(): number {
    const now = this.o.now();
    const since = now - this.o.windowMs;
    let old = 0;
    while (old < this.#finished.length && (this.#finished[old] as number) < since) old += 1;
    if (old > 0) this.#finished.splice(0, old);
    const inTarget = Math.ceil((this.#finished.length * this.o.targetMs) / this.o.windowMs);
    return Math.min(this.o.maxConcurrent, Math.max(this.o.minConcurrent, inTarget));
  }

  /** Takes on a handshake; false (and nothing taken) when {@link limit} are in progress. */
  tryAcquire(): boolean {
    if (this.#held >= this.limit) return false;
    this.#held += 1;
    return true;
  }

  /** A handshake taken on by {@link tryAcquire} ended (welcomed or not); once per acquire. */
  release(): void {
    if (this.#held === 0) return;
    this.#held -= 1;
    this.#finished.push(this.o.now());
    if (this.#finished.length > this.#keep) this.#finished.shift();
  }
}
