/** The browser's clock, re-read every `intervalMs` so times left count down on screen. */
import { useEffect, useState } from "preact/hooks";

/** Milliseconds since the epoch, updated every `intervalMs`. */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
