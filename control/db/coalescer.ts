/**
 * A coalescing batcher: many callers each ask for one item, and the items are executed
 * together in batches, so that under load one statement serves many callers instead of
 * each caller queueing for a connection of its own.
 */

/** Options of a {@link Coalescer}. */
export interface CoalescerOptions<I, R> {
  /**
   * Executes one batch. Must resolve with exactly one result per item, in the order of
   * `items`; a rejection (or a result list of another length) fails every item of the batch.
   */
  readonly execute: (items: I[]) => Promise<R[]>;
  /** How many batches may execute at once: a positive integer. */
  readonly maxInFlight: number;
  /** How many items one batch may hold at most: a positive integer. */
  readonly maxBatch: number;
}

interface Waiter<I, R> {
  readonly item: I;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Runs items through a batch `execute`, latency first:
 * - while fewer than `maxInFlight` batches are executing, {@link Coalescer.run} starts a
 *   batch at once (at low load an item costs one `execute`, with no timer delay);
 * - otherwise the item waits, and each time a batch settles the next batch takes up to
 *   `maxBatch` waiting items, oldest first, so batches grow with the load;
 * - never more than `maxInFlight` batches execute at once, never more than `maxBatch` items
 *   in one batch;
 * - each caller gets the result at its own position; when `execute` fails, every caller of
 *   that batch is rejected with its error (no retry) and later batches still run.
 *
 * Every promise returned by `run` settles once `execute` settles: none is left pending.
 */
export class Coalescer<I, R> {
  private readonly execute: (items: I[]) => Promise<R[]>;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;
  private readonly waiting: Waiter<I, R>[] = [];
  private inFlight = 0;

  /** @throws RangeError when `maxInFlight` or `maxBatch` is not a positive integer. */
  constructor(options: CoalescerOptions<I, R>) {
    for (const key of ["maxInFlight", "maxBatch"] as const) {
      const value = options[key];
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`${key} must be a positive integer, got ${value}`);
      }
    }
    this.execute = options.execute;
    this.maxInFlight = options.maxInFlight;
    this.maxBatch = options.maxBatch;
  }

  /** The number of batches executing now. */
  get executing(): number {
    return this.inFlight;
  }

  /** The number of items waiting for a batch. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Executes `item` in the next batch that has room, and resolves with its result. */
  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight += 1;
      // Settles every waiter itself and never rejects.
      void this.executeBatch(batch);
    }
  }

  private async executeBatch(batch: Waiter<I, R>[]): Promise<void> {
    try {
      let results: R[];
      try {
        results = await this.execute(batch.map((w) => w.item));
      } catch (error) {
        for (const w of batch) w.reject(error);
        return;
      }
      if (!Array.isArray(results) || results.length !== batch.length) {
        const error = new Error(
          `batch execute returned ${Array.isArray(results) ? results.length : typeof results} results for ${batch.length} items`,
        );
        for (const w of batch) w.reject(error);
        return;
      }
      batch.forEach((w, i) => {
        w.resolve(results[i] as R);
      });
    } finally {
      this.inFlight -= 1;
      this.startBatches();
    }
  }
}
