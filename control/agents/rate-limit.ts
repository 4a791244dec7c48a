/** A token bucket: `ratePerSecond` sustained, bursts up to `burst`. */
export class TokenBucket {
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.lastMs = nowMs;
  }

  /**
   * Takes `cost` tokens (default one); false, and nothing taken, when fewer are left. A cost
   * above `burst` is never granted.
   */
  take(nowMs: number, cost = 1): boolean {
    const elapsed = Math.max(0, nowMs - this.lastMs) / 1000;
    this.lastMs = nowMs;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.ratePerSecond);
    const need = Math.max(1, cost);
    if (this.tokens < need) return false;
    this.tokens -= cost;
    return true;
  }
}
