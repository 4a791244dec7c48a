/**
 * The simulation's event queue in virtual time: events run in time order, ties in the order
 * they were scheduled, so a seed replays exactly.
 */

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

/** A queue of timed events. */
export class EventQueue {
  private events: Scheduled[] = [];
  private seq = 0;

  /** Schedules `run` at `at` (epoch ms of virtual time). */
  at(at: number, run: () => void): void {
    const e = { at, seq: this.seq++, run };
    // Binary insertion after every event due at or before `at`.
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.events[mid] as Scheduled).at <= at) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, e);
  }

  /** The time of the next event, if any. */
  next(): number | undefined {
    return this.events[0]?.at;
  }

  /** Runs every event due at or before `now` (including those they schedule for then). */
  runDue(now: number): number {
    let ran = 0;
    while (this.events.length > 0 && (this.events[0] as Scheduled).at <= now) {
      const e = this.events.shift() as Scheduled;
      e.run();
      ran++;
    }
    return ran;
  }

  /** How many events wait. */
  get size(): number {
    return this.events.length;
  }
}
