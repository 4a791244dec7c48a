/**
 * The campaign worker's leadership state: whether this process leads, since when (its
 * "ready" time: liveness is judged from then on), and when the lease is ticked next. On a
 * change of hands (gained or lost) the worker forgets what it knew as leader.
 */
import type { LeaderLease } from "../campaign-store/index.js";

/** What a lease tick changed. */
export type LeadershipChange = "gained" | "lost" | "none";

/** The worker's view of its lease. */
export class Leadership {
  private leadingNow = false;
  private since = 0;
  private nextTickAt = 0;

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

  /** Ticks the lease when due at `now`; says whether leadership changed hands. */
  async tick(now: number): Promise<LeadershipChange> {
    if (now < this.nextTickAt) return "none";
    const was = this.leadingNow;
    this.leadingNow = await this.lease.tick();
    this.nextTickAt = now + Math.floor(this.ttlMs / 3);
    if (this.leadingNow && !was) {
      this.since = now;
      return "gained";
    }
    return was && !this.leadingNow ? "lost" : "none";
  }

  /** Ends leadership at once (a fenced write was refused); the lease is ticked again now. */
  lost(): void {
    this.leadingNow = false;
    this.nextTickAt = 0;
  }
}
