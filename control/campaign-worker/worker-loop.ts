/**
 * The loop of {@link CampaignWorker.run}: turns of `step` separated by sleeps on the Clock
 * until the next due time or an event, and beside them a flusher that writes buffered agent
 * reports within ~50 ms of their arrival. With nothing buffered the flusher sleeps until an
 * event buffers something: no idle polling.
 */
import type { Clock } from "../clock.js";
import { nap, type Waker } from "./waker.js";

/** How often buffered agent reports are written between passes. */
const REPORT_FLUSH_MS = 50;

/** What the loop drives. */
export interface WorkerLoopParts {
  readonly clock: Clock;
  /** One turn; when the next is due (epoch ms) and whether something is due at once. */
  readonly step: () => Promise<{ readonly next: number; readonly busy: boolean }>;
  /** The buffered agent reports. */
  readonly reports: { readonly pending: boolean; flush(): Promise<void> };
  /** Woken when an event buffers a report. */
  readonly flushWaker: Waker;
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
  const flusher = (async () => {
    while (!signal.aborted) {
      if (!reports.pending) {
        await parts.flushWaker.wait(clock, Number.POSITIVE_INFINITY, signal);
        continue;
      }
      await nap(clock, REPORT_FLUSH_MS, signal);
      await reports.flush().catch(() => {});
    }
  })();
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
