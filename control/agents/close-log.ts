/**
 * The log of the agent listener's closed unauthenticated connections, which an attacker
 * controls the rate of: at most one line per `intervalMs` (of the Clock), each counting the
 * closes by reason since the previous line and naming the last address. The first close is
 * logged at once; those within an interval wait for the next close after it. The counters of
 * `/metrics` count every one.
 */
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { UnauthenticatedClose } from "./unauthenticated-connections.js";

/** Returns the hook that logs closes at most once per `intervalMs`, at warn. */
export function throttledCloseLog(
  log: Logger,
  clock: Clock,
  intervalMs: number,
): (reason: UnauthenticatedClose, address: string) => void {
  let lastMs = Number.NEGATIVE_INFINITY;
  let counts: Partial<Record<UnauthenticatedClose, number>> = {};
  return (reason, address) => {
    counts[reason] = (counts[reason] ?? 0) + 1;
    const now = clock.now().getTime();
    if (now - lastMs < intervalMs && now >= lastMs) return;
    lastMs = now;
    log.warn(
      { closed: counts, lastAddress: address },
      "agent listener: closed connections that authenticated no stream in time or exceeded their address's share (timeouts.agentConnectionAuthSeconds, limits.agentUnauthenticatedConnectionsPerAddress)",
    );
    counts = {};
  };
}
