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
  clock.sleep(ms, controller.signal).then(
    () => {
      if (controller.signal.aborted) return;
      try {
        callback();
      } catch (error) {
        onError(error);
      }
    },
    () => undefined,
  );
  return { cancel: () => controller.abort() };
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
  let current: ClockTimer | undefined;
  let cancelled = false;
  const arm = () => {
    current = scheduleOnce(
      clock,
      ms,
      () => {
        if (cancelled) return;
        arm();
        callback();
      },
      onError,
    );
  };
  arm();
  return {
    cancel: () => {
      cancelled = true;
      current?.cancel();
    },
  };
}

function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
