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

  /** Takes one token; false when the bucket is empty. */
  take(nowMs: number): boolean {
    const elapsed = Math.max(0, nowMs - this.lastMs) / 1000;
    this.lastMs = nowMs;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.ratePerSecond);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
