/**
 * Time as a port. The campaign engine and worker read time only through a {@link Clock},
 * so tests drive a 30-minute batch with a manual clock in milliseconds.
 */

/** A source of time and of waiting. */
export interface Clock {
  /** The current time. */
  now(): Date;
  /**
   * Resolves after `ms` milliseconds of this clock's time, or rejects with the signal's
   * reason when the signal aborts first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Milliseconds from an arbitrary origin that pass at the rate of real time and are never
   * stepped (what `sleep` waits on): the difference between two readings is the time that
   * passed, whatever was done to the wall clock meanwhile. Optional: a Clock without it cannot
   * tell a step of its wall clock from time passing.
   */
  monotonicMs?(): number;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  monotonicMs: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};
