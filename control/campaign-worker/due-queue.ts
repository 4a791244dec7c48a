/**
 * What the campaign worker has to decide, and when (the work queue of a reconcile loop): the
 * campaigns marked due by events, the time each campaign asked to be decided again at
 * (`wakeAt`), and "every live campaign" (a periodic pass, a new leadership, an explicit wake).
 * It owns no timer: the loop asks it what is due now and when the next thing is.
 */

/** The worker's due campaigns and wake-up times. */
export class DueQueue {
  private readonly dirty = new Set<string>();
  private readonly wakeAt = new Map<string, number>();
  private all = true;

  /** Marks one campaign due now. */
  markDue(campaignId: string): void {
    this.dirty.add(campaignId);
  }

  /** Marks every live campaign due now (read from the store on the next take). */
  markAllDue(): void {
    this.all = true;
  }

  /** True when something is due without waiting for a time. */
  get hasDue(): boolean {
    return this.dirty.size > 0 || this.all;
  }

  /** Asks for `campaignId` to be decided at `at` (epoch ms); undefined cancels it. */
  wakeAtTime(campaignId: string, at: number | undefined): void {
    if (at === undefined) this.wakeAt.delete(campaignId);
    else this.wakeAt.set(campaignId, at);
  }

  /**
   * Takes what is due at `now`: the marked campaigns, those whose wake time came, and, when
   * every live campaign was marked, the ids `live()` returns. The taken ones are unmarked.
   */
  async take(now: number, live: () => Promise<readonly string[]>): Promise<string[]> {
    if (this.all) {
      this.all = false;
      for (const id of await live()) this.dirty.add(id);
    }
    for (const [id, at] of this.wakeAt) if (at <= now) this.dirty.add(id);
    const due = [...this.dirty];
    this.dirty.clear();
    return due;
  }

  /** The earliest wake time asked for, if any. */
  nextWake(): number | undefined {
    let next: number | undefined;
    for (const at of this.wakeAt.values()) if (next === undefined || at < next) next = at;
    return next;
  }

  /** Forgets a campaign's wake time (it finished, or is no longer decided here). */
  forget(campaignId: string): void {
    this.wakeAt.delete(campaignId);
    this.dirty.delete(campaignId);
  }

  /** Forgets everything and marks every live campaign due (leadership changed hands). */
  reset(): void {
    this.dirty.clear();
    this.wakeAt.clear();
    this.all = true;
  }
}
