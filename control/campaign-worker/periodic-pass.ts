/**
 * When the leading worker re-reads and decides every live campaign without an event (its
 * level-based safety net): every `intervalMs` while it decides at least one campaign, and
 * every `idleFactor × intervalMs` while it decides none. With no campaign tracked the read
 * finds nothing unless a campaign was started or commanded without its wake-up reaching this
 * worker: a start or command here wakes it directly, one through another Control is announced
 * on the campaigns channel, and lost notifications (a listener gap) mark every campaign due at
 * once. So an idle Control asks the store for live campaigns twice a minute, not every few
 * seconds, and a tracked campaign is still re-decided every `intervalMs` from the moment it is
 * tracked. Time comes from the caller (the worker's Clock).
 */

/** How many intervals apart the re-reads are while no campaign is tracked. */
export const IDLE_PERIOD_FACTOR = 6;

/** The schedule of the periodic pass; see the file's TSDoc. */
export class PeriodicPass {
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: number,
    private readonly idleFactor = IDLE_PERIOD_FACTOR,
  ) {}

  /** When the pass is due next (epoch ms), given whether a campaign is tracked now. */
  nextAt(tracking: boolean): number {
    return this.last + (tracking ? this.intervalMs : this.idleFactor * this.intervalMs);
  }

  /** True (and the pass counted as run at `now`) when it is due at `now`. */
  take(now: number, tracking: boolean): boolean {
    if (now < this.nextAt(tracking)) return false;
    this.last = now;
    return true;
  }

  /** Makes the pass due at once (leadership changed hands). */
  reset(): void {
    this.last = Number.NEGATIVE_INFINITY;
  }
}
