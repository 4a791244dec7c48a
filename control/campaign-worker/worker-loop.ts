/**
 * The loop of {@link CampaignWorker.run}: turns of `step` separated by sleeps on the Clock
 * until the next due time or an event, and beside them the report flusher
 * (`report-flusher.ts`), which writes buffered agent reports as soon as the write before has
 * ended. With nothing buffered the flusher sleeps until an event buffers something: no idle
 * polling.
 */
import type { Clock } from "../clock.js";
import { runReportFlusher } from "./report-flusher.js";
import { nap, type Waker } from "./waker.js";

/** What the loop drives. */
export interface WorkerLoopParts {
  readonly clock: Clock;
  /** One turn; when the next is due (epoch ms) and whether something is due at once. */
  readonly step: () => Promise<{ readonly next: number; readonly busy: boolean }>;
  /** The buffered agent reports. */
  readonly reports: { readonly pending: boolean; flush(): Promise<void> };
  /** Woken when an event buffers a report. */
  readonly flushWaker: Waker;
  /** Told of a failed write of the reports (they stay buffered; see `report-flusher.ts`). */
  readonly reportFlushFailed: (error: unknown) => void;
  /** Woken when something makes a turn due. */
  readonly stepWaker: Waker;
  /** How long events are gathered before a turn. */
  readonly debounceMs: number;
  /** Starts listening to events and notifications; returns the stop function. */
  readonly listen: () => () => Promise<void>;
  /** Gives the lease up at the end. */
  readonly release: () => Promise<void>;
}

/**
 * Runs until `signal` aborts; then stops listening, writes what is buffered and releases
 * the lease. Reports are written even while a long decision or send runs (a pass also
 * flushes before deciding, so decisions always see what arrived).
 */
export async function runWorkerLoop(parts: WorkerLoopParts, signal: AbortSignal): Promise<void> {
  const { clock, reports, debounceMs } = parts;
  const unsubscribe = parts.listen();
  const flusher = runReportFlusher(
    { clock, reports, waker: parts.flushWaker, failed: parts.reportFlushFailed },
    signal,
  );
  try {
    while (!signal.aborted) {
      const { next, busy } = await parts.step();
      if (busy) {
        await nap(clock, debounceMs, signal);
        continue;
      }
      const woken = await parts.stepWaker.wait(clock, next - clock.now().getTime(), signal);
      if (woken) await nap(clock, debounceMs, signal);
    }
  } finally {
    await flusher;
    await unsubscribe();
    await reports.flush().catch(() => {});
    await parts.release();
  }
}
