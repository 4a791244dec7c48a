/**
 * Waiting on the Clock that an event can cut short: the worker loop sleeps until its next due
 * time or until an agent event wakes it; the report flusher sleeps until something is buffered.
 */
import type { Clock } from "../clock.js";

/** A wait that {@link Waker.wake} ends early. */
export class Waker {
  private current: AbortController | undefined;

  /** Ends the wait in progress, if any. */
  wake(): void {
    this.current?.abort();
  }

  /**
   * Waits `ms` of the clock's time, or until woken or `signal` aborts (`ms` = Infinity: until
   * woken or aborted, with no timer at all).
   * @returns true when it was woken.
   */
  async wait(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
    const controller = new AbortController();
    this.current = controller;
    const both = AbortSignal.any([signal, controller.signal]);
    try {
      if (ms === Number.POSITIVE_INFINITY) await aborted(both);
      else await nap(clock, ms, both);
    } finally {
      this.current = undefined;
    }
    return controller.signal.aborted;
  }
}

/** Sleeps `ms` on the clock; returns early (never rejects) when `signal` aborts. */
export async function nap(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  await clock.sleep(ms, signal).catch(() => {});
}

/** Resolves when `signal` aborts (a wait on an event, not on time). */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}
