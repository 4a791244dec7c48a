/**
 * Reconnect backoff: exponential, capped, with full jitter applied after the cap, so a
 * fleet whose streams all drop at once spreads its reconnects over the whole window.
 */

/** Backoff settings; all in milliseconds. */
export interface BackoffOptions {
  /** Delay ceiling of the first retry (default 250). */
  readonly baseMs: number;
  /** Largest delay ceiling (default 30 000). */
  readonly capMs: number;
  /** A stream that stayed open this long resets the attempt counter (default 10 000). */
  readonly resetAfterMs: number;
}

/** The defaults: base 250 ms, cap 30 s, reset after 10 s of healthy stream. */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({
  baseMs: 250,
  capMs: 30_000,
  resetAfterMs: 10_000,
});

/**
 * The delay before retry number `attempt` (0 for the first): a uniform draw from
 * [0, min(cap, base·2^attempt)). `random` returns floats in [0, 1).
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
