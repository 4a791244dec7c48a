/**
 * A {@link Clock} that moves only when told: tests and the deterministic simulation set the
 * time, and {@link ManualClock.advanceTo} fires every sleep due by then, in due-time order
 * (ties in the order they were asked for). A 30-minute batch is tested in milliseconds.
 */
import type { Clock } from "./clock.js";

interface Sleeper {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/** A clock driven by hand; see the file's TSDoc. */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];
  /** Real time passed (see {@link Clock.monotonicMs}): moved by advance, not by a step. */
  private passed = 0;

  /** @param start the initial time, epoch ms. */
  constructor(start = 0) {
    this.time = start;
  }

  now(): Date {
    return new Date(this.time);
  }

  /** The current time, epoch ms. */
  get ms(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const sleeper: Sleeper = {
        at: this.time + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** The time of the earliest pending sleep, if any. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const s of this.sleepers) if (next === undefined || s.at < next) next = s.at;
    return next;
  }

  /**
   * Moves time to `at` (never backwards) and resolves every sleep due by then, earliest first.
   * The sleepers' continuations run on the microtask queue after this returns.
   */
  advanceTo(at: number): void {
    if (at < this.time) throw new Error(`the clock cannot go back from ${this.time} to ${at}`);
    this.passed += at - this.time;
    this.time = at;
    const due = this.sleepers
      .filter((s) => s.at <= at)
      .sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.sleepers = this.sleepers.filter((s) => s.at > at);
    for (const s of due) s.resolve();
  }

  /** Real time passed since the clock was made, never stepped (see {@link Clock.monotonicMs}). */
  monotonicMs(): number {
    return this.passed;
  }

  /**
   * Steps the wall clock by `ms` (forward, or back when negative) as an administrator or NTP
   * does: no time passes, so nothing falls due, and each pending sleep still ends after the
   * time it was asked for (its due time moves with the step, as a timer's does).
   */
  stepWall(ms: number): void {
    this.time += ms;
    this.sleepers = this.sleepers.map((s) => ({ ...s, at: s.at + ms }));
  }

  /** Moves time forward by `ms`; see {@link ManualClock.advanceTo}. */
  advance(ms: number): void {
    this.advanceTo(this.time + ms);
  }
}
