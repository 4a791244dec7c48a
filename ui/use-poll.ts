/**
 * Data the dashboard reads again every few seconds while it is shown: the last answer, the
 * last error (the previous answer stays on screen), and a way to read again at once.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/** What {@link usePoll} holds. */
export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  /** When `data` arrived (ms since the epoch, the browser's clock; 0 before any answer). */
  readonly receivedAt: number;
  /** Reads again now (after an action, or when a filter changed). */
  readonly reload: () => void;
}

/**
 * Calls `load` now, whenever `deps` change, and every `intervalMs` after each answer (never
 * again when `intervalMs` is 0); a slower answer to an older call never overwrites a newer one.
 */
export function usePoll<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: readonly unknown[],
  intervalMs = 5000,
): Polled<T> {
  const [data, setData] = useState<{ value: T; at: number } | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current(controller.signal);
        if (controller.signal.aborted) return;
        setData({ value, at: Date.now() });
        setError(undefined);
      } catch (e) {
        if (controller.signal.aborted) return;
        setError(e);
      }
      if (intervalMs > 0) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [...deps, tick, intervalMs]);
  return { data: data?.value, error, receivedAt: data?.at ?? 0, reload };
}
