/**
 * An interruptible sleep for one waiter: the agent's run loop sleeps on it (backoff,
 * restart delay, offline) and anything that changes what the loop should do wakes it.
 */
export class Waker {
  #wake: (() => void) | undefined;

  /**
   * Resolves after `ms` (never when `ms` is `Infinity`), at the next {@link wake}, or when
   * `signal` aborts, whichever comes first. Never rejects.
   */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal.removeEventListener("abort", done);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }

  /** Ends the current sleep, if any, at once. */
  wake(): void {
    this.#wake?.();
  }
}

/** Resolves after `ms` or when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
