/** A value that follows another once it has stopped changing, so typing does not call per key. */
import { useEffect, useState } from "preact/hooks";

/** `value`, `delayMs` after its last change (compared as JSON). */
export function useDebounced<T>(value: T, delayMs = 300): T {
  const [settled, setSettled] = useState(value);
  const key = JSON.stringify(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [key, delayMs]);
  return settled;
}
