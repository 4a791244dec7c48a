/**
 * The report flusher beside the worker's loop: buffered agent reports are written as soon as
 * something is buffered and the write before has ended (group commit). What arrives while a
 * write runs goes into the next one, right after it, so a write's size follows the load: one
 * report alone when the fleet is quiet, thousands in one statement during a rollout. Two writes
 * start at least {@link MIN_WRITE_GAP_MS} apart, which bounds the statements a trickle of
 * reports costs the database; after a failed write the next waits
 * {@link RETRY_AFTER_FAILURE_MS} (the reports stay buffered). With nothing buffered the flusher
 * waits for an event: no idle polling, no timer (docs/decisions.md, "Reports are written by
 * group commit, not on a timer").
 */
import type { Clock } from "../clock.js";
import { nap, type Waker } from "./waker.js";

/** The least time between the starts of two writes (ms). */
export const MIN_WRITE_GAP_MS = 10;

/** How long the flusher waits after a failed write before it tries again (ms). */
export const RETRY_AFTER_FAILURE_MS = 1000;

/** What the flusher drives. */
export interface ReportFlusherParts {
  readonly clock: Clock;
  /** The buffered agent reports. */
  readonly reports: { readonly pending: boolean; flush(): Promise<void> };
  /** Woken when an event buffers a report. */
  readonly waker: Waker;
  /** Told of each failed write (at most one a {@link RETRY_AFTER_FAILURE_MS}). */
  readonly failed: (error: unknown) => void;
}

/**
 * Runs until `signal` aborts. The reports' owner keeps the reports of a failed write for the
 * next one; the flusher tells `failed` and tries again {@link RETRY_AFTER_FAILURE_MS} later.
 * The gap is measured on the clock's wall time but never waits longer than
 * {@link MIN_WRITE_GAP_MS}, so a wall clock stepped back delays no write.
 */
export async function runReportFlusher(
  parts: ReportFlusherParts,
  signal: AbortSignal,
): Promise<void> {
  const { clock, reports, waker } = parts;
  let lastStart = Number.NEGATIVE_INFINITY;
  while (!signal.aborted) {
    if (!reports.pending) {
      await waker.wait(clock, Number.POSITIVE_INFINITY, signal);
      continue;
    }
    // The reports handled in this turn of the event loop (one read of many streams) join.
    await nextTurn();
    const gap = Math.min(MIN_WRITE_GAP_MS, lastStart + MIN_WRITE_GAP_MS - clock.now().getTime());
    await nap(clock, gap, signal);
    if (signal.aborted) return;
    lastStart = clock.now().getTime();
    try {
      await reports.flush();
    } catch (error) {
      parts.failed(error);
      await nap(clock, RETRY_AFTER_FAILURE_MS, signal);
    }
  }
}

/** Resolves after the I/O callbacks of the current turn of the event loop have run. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
