/**
 * The soft limit on open file descriptors of this process (RLIMIT_NOFILE), as far as Node.js
 * lets us read it. Node has no `getrlimit`; on Linux the kernel publishes the limits of every
 * process in `/proc/self/limits`, which this reads. Elsewhere the limit is unknown and callers
 * fall back to fixed defaults.
 *
 * Node.js raises its soft limit to the hard limit at start, so the value read here is the one
 * the process actually runs under, not the shell's `ulimit -Sn` before the raise.
 */
import { readFileSync } from "node:fs";

/**
 * Parses the "Max open files" row of a `/proc/<pid>/limits` text: the soft limit (the first
 * number). Undefined when the row is missing, malformed or `unlimited`.
 */
export function parseOpenFileLimit(procLimits: string): number | undefined {
  const row = /^Max open files\s+(\S+)\s+(\S+)/m.exec(procLimits);
  const soft = row?.[1];
  if (soft === undefined || !/^\d+$/.test(soft)) return undefined;
  const value = Number(soft);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * The soft open-file limit of this process: read from `/proc/self/limits` (Linux); undefined
 * where that file cannot be read (macOS, Windows, a restricted /proc) or says `unlimited`.
 * `readText` exists for tests.
 */
export function readOpenFileLimit(
  readText: (path: string) => string = (path) => readFileSync(path, "utf8"),
): number | undefined {
  try {
    return parseOpenFileLimit(readText("/proc/self/limits"));
  } catch {
    return undefined;
  }
}
