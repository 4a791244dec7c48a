/**
 * The deadlines of one welcomed stream, checked by the fleet's shared ticker instead of
 * a timer per agent: the next heartbeat, a delayed failing ConfigStatus, the next flap.
 */

/** What is due at one tick. */
export interface DueWork {
  heartbeat: boolean;
  configFailure: boolean;
  flap: boolean;
}

/** Deadlines of the current stream; all cleared when it closes. */
export class StreamTimers {
  #heartbeatMs = 0;
  #nextHeartbeatAt = Number.POSITIVE_INFINITY;
  #configAt: number | undefined;
  #flapAt: number | undefined;

  /**
   * Arms the deadlines of a newly welcomed stream. The first heartbeat is due at a random
   * point within the first interval, which spreads a fleet's heartbeats over the interval.
   */
  arm(now: number, heartbeatMs: number, configFailInMs?: number, flapInMs?: number): void {
    this.#heartbeatMs = heartbeatMs;
    this.#nextHeartbeatAt = now + Math.random() * heartbeatMs;
    this.#configAt = configFailInMs === undefined ? undefined : now + configFailInMs;
    this.#flapAt = flapInMs === undefined ? undefined : now + flapInMs;
  }

  /** Forgets every deadline. */
  clear(): void {
    this.#nextHeartbeatAt = Number.POSITIVE_INFINITY;
    this.#configAt = undefined;
    this.#flapAt = undefined;
  }

  /** What is due at `now`; each one-shot deadline fires once, heartbeats keep their period. */
  due(now: number): DueWork {
    const work: DueWork = { heartbeat: false, configFailure: false, flap: false };
    if (now >= this.#nextHeartbeatAt) {
      work.heartbeat = true;
      this.#nextHeartbeatAt += this.#heartbeatMs;
      if (this.#nextHeartbeatAt <= now) this.#nextHeartbeatAt = now + this.#heartbeatMs;
    }
    if (this.#configAt !== undefined && now >= this.#configAt) {
      work.configFailure = true;
      this.#configAt = undefined;
    }
    if (this.#flapAt !== undefined && now >= this.#flapAt) {
      work.flap = true;
      this.#flapAt = undefined;
    }
    return work;
  }
}
