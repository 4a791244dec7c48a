/**
 * The campaign worker's leadership state: whether this process leads, since when (its
 * "ready" time: liveness is judged from then on, and no deadline falls within a reconnect
 * timeout of it), and when the lease is ticked next. On a change of hands (gained or lost) the
 * worker forgets what it knew as leader.
 *
 * A step of the wall clock forward counts as becoming ready again: when the wall clock moved
 * more than the lease's TTL further than real time (the Clock's monotonic reading) between two
 * ticks, no time passed for the nodes, so `readyAt` moves to the tick after the step, as at a
 * takeover, and no deadline falls within a reconnect timeout of it (docs/decisions.md, "One
 * clock for ordering across Controls"). Time that did pass (a process that stood still) is
 * judged as it is: the holders recorded what the nodes said meanwhile. A clock that went back
 * ticks the lease at once (its next tick time was read on the clock before the step).
 */
import type { LeaderLease } from "../campaign-store/index.js";

/** A step of the leader's wall clock forward: when it was seen (epoch ms) and its size. */
export interface ClockStep {
  readonly at: number;
  readonly ms: number;
}

/** What a lease tick changed. */
export type LeadershipChange = "gained" | "lost" | "none";

/** The worker's view of its lease. */
export class Leadership {
  private leadingNow = false;
  private since = 0;
  private nextTickAt = 0;
  private lastNow: number | undefined;
  private lastPassed: number | undefined;
  private step: ClockStep | undefined;

  /** @param ttlMs the lease time-to-live; the lease is renewed every third of it. */
  constructor(
    readonly lease: LeaderLease,
    private readonly ttlMs: number,
  ) {}

  /** True while this process leads. */
  get leading(): boolean {
    return this.leadingNow;
  }

  /** When this process last became leader (epoch ms; 0 before). */
  get readyAt(): number {
    return this.since;
  }

  /** When the lease should be ticked next (epoch ms). */
  get nextTick(): number {
    return this.nextTickAt;
  }

  /** The last step forward of the wall clock (see the file's TSDoc), once: undefined until the next. */
  takeStep(): ClockStep | undefined {
    const step = this.step;
    this.step = undefined;
    return step;
  }

  /**
   * Ticks the lease when due at `now`; says whether leadership changed hands. `passed` is the
   * Clock's monotonic reading (`Clock.monotonicMs`), when it has one: without it a step of the
   * wall clock is not told from time passing.
   */
  async tick(now: number, passed?: number): Promise<LeadershipChange> {
    const last = this.lastNow;
    const lastPassed = this.lastPassed;
    this.lastNow = now;
    this.lastPassed = passed;
    const stepped =
      last !== undefined && passed !== undefined && lastPassed !== undefined
        ? now - last - (passed - lastPassed)
        : 0;
    const back = last !== undefined && now < last;
    if (now < this.nextTickAt && !back) return "none";
    const was = this.leadingNow;
    this.leadingNow = await this.lease.tick();
    this.nextTickAt = now + Math.floor(this.ttlMs / 3);
    if (this.leadingNow && !was) {
      this.since = now;
      return "gained";
    }
    if (this.leadingNow && stepped > this.ttlMs) {
      this.since = now;
      this.step = { at: now, ms: stepped };
    }
    return was && !this.leadingNow ? "lost" : "none";
  }

  /** Ends leadership at once (a fenced write was refused); the lease is ticked again now. */
  lost(): void {
    this.leadingNow = false;
    this.nextTickAt = 0;
  }
}
