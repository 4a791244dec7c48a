/**
 * The kernel's cap on any listener's accept queue (`net.core.somaxconn`), as Linux publishes
 * it in `/proc/sys/net/core/somaxconn`. A listener asking for more gets this many; a
 * connection arriving at a full queue is dropped at its SYN and retried by the client's kernel
 * 1 s, 3 s and 7 s later.
 */
import { readFileSync } from "node:fs";

/**
 * `net.core.somaxconn`; undefined where it cannot be read (not Linux, a restricted /proc) or
 * is not a positive integer. `readText` exists for tests.
 */
export function readKernelAcceptQueueCap(
  readText: (path: string) => string = (path) => readFileSync(path, "utf8"),
): number | undefined {
  try {
    const text = readText("/proc/sys/net/core/somaxconn").trim();
    if (!/^\d+$/.test(text)) return undefined;
    const value = Number(text);
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
