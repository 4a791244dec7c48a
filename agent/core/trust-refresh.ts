/**
 * The Agent's periodic TUF refresh. Without it an Agent refreshes its metadata only when
 * Control offers an upgrade, so a Control that never offers one (or serves a timestamp that
 * stopped moving) would keep the node from learning that its metadata went stale: TUF's
 * indefinite freeze. The loop refreshes through the same tuf-js client an upgrade's check
 * uses, once at start and then every `intervalMs` (each wait drawn from 80–100% of it, so a
 * fleet started together spreads its requests and no wait exceeds the period), records the
 * outcome as the trust state, and tells the holder when the node becomes frozen or stops
 * being frozen.
 */

import { noteTrust, type TrustHolder } from "./trust-state.js";
import type { TufCheck } from "./tuf-check.js";

/** The default refresh period: one hour. */
export const DEFAULT_TUF_REFRESH_MS = 60 * 60 * 1000;

/** What {@link runTrustRefresh} needs; time comes only through `now` and `sleep`. */
export interface TrustRefreshOptions {
  /** The Agent's TUF client (its `refresh` never throws). */
  readonly tuf: Pick<TufCheck, "refresh">;
  /** The agent whose `state.trust` is updated and whose `trustChanged` is told. */
  readonly holder: TrustHolder;
  /** The refresh period in ms (at least 1). */
  readonly intervalMs: number;
  /** Saves the durable state after each refresh; must not reject. */
  readonly persist: () => Promise<void>;
  readonly now: () => Date;
  /** Resolves after `ms` or when `signal` aborts; never rejects. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
  readonly signal: AbortSignal;
}

/** The wait before the next refresh: `intervalMs` × [0.8, 1.0], never above `intervalMs`. */
export function nextRefreshDelayMs(intervalMs: number, random: number): number {
  const fraction = 0.8 + 0.2 * Math.min(Math.max(random, 0), 1);
  return Math.max(1, Math.min(intervalMs, Math.round(intervalMs * fraction)));
}

/**
 * Refreshes at once, then periodically, until `signal` aborts. Rejects only when
 * `intervalMs` is not a positive integer.
 */
export async function runTrustRefresh(options: TrustRefreshOptions): Promise<void> {
  if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs < 1) {
    throw new RangeError("the TUF refresh period must be a positive integer of ms");
  }
  const random = options.random ?? Math.random;
  let delayMs = 0;
  while (!options.signal.aborted) {
    if (delayMs > 0) await options.sleep(delayMs, options.signal);
    if (options.signal.aborted) return;
    const verdict = await options.tuf.refresh();
    if (options.signal.aborted) return;
    noteTrust(options.holder, verdict, options.now());
    await options.persist();
    delayMs = nextRefreshDelayMs(options.intervalMs, random());
  }
}
