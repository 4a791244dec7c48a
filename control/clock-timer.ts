/**
 * Timers on a {@link Clock}: what `setTimeout` and `setInterval` are to the wall clock, for
 * code whose time must be the injected clock's (the agent hub's liveness sweep, a session's
 * handshake timeout, a closed stream's write deadline). On the system clock they are wall
 * timers; on a manual clock they fire when the test or the simulation moves time past them.
 */
import type { Clock } from "./clock.js";

/** A scheduled callback; {@link ClockTimer.cancel} is idempotent and safe after it fired. */
export interface ClockTimer {
  /** Stops the timer: its callback never runs (again) after this returns. */
  cancel(): void;
}

/**
 * Runs `callback` once, `ms` of `clock`'s time from now, unless cancelled first. A callback
 * that throws is reported to `onError` (default: rethrown as an uncaught exception, as a
 * timer's would be), never swallowed by the clock's promise.
 */
export function scheduleOnce(
  clock: Clock,
  ms: number,
  callback: () => void,
  onError: (error: unknown) => void = rethrowLater,
): ClockTimer {
  const controller = new AbortController();
  after(clock, ms, controller.signal, callback, onError);
  return { cancel: () => cancel(controller) };
}

/**
 * Runs `callback` every `ms` of `clock`'s time until cancelled. The next run is due `ms`
 * after the previous one ran (a manual clock moved far ahead fires it once, at the new
 * time, not once per period missed). A throwing callback is reported to `onError` and the
 * timer keeps running.
 */
export function scheduleEvery(
  clock: Clock,
  ms: number,
  callback: () => void,
  onError: (error: unknown) => void = rethrowLater,
): ClockTimer {
  // One signal for the whole series: a timer that runs for the life of the process costs
  // no allocation per period beyond its sleep.
  const controller = new AbortController();
  const run = () => {
    after(clock, ms, controller.signal, run, onError);
    callback();
  };
  after(clock, ms, controller.signal, run, onError);
  return { cancel: () => cancel(controller) };
}

/** The reason a cancelled timer's sleep ends with (never seen: the rejection is dropped). */
const CANCELLED = Object.freeze({ cancelled: true });

function cancel(controller: AbortController): void {
  if (!controller.signal.aborted) controller.abort(CANCELLED);
}

function after(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  callback: () => void,
  onError: (error: unknown) => void,
): void {
  clock.sleep(ms, signal).then(
    () => {
      if (signal.aborted) return;
      try {
        callback();
      } catch (error) {
        onError(error);
      }
    },
    () => undefined,
  );
}

function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
