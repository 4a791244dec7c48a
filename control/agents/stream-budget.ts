/**
 * How many agent streams, and how many TCP connections on the agent listener, one Control
 * process may hold, so that it never runs out of file descriptors: every TCP connection is a
 * descriptor, and a process at its open-file limit fails to accept admin requests, to open
 * database connections and to read files, which is how it collapses.
 *
 * With `L` the soft open-file limit (see {@link readOpenFileLimit}):
 *
 * ```
 * reserve        = 128 + ⌈L / 20⌉         descriptors kept for everything but agent connections
 * maxConnections = L − reserve            TCP connections the agent listener holds at once
 * maxStreams     = maxConnections − max(8, ⌈maxConnections / 20⌉)
 * ```
 *
 * The fixed 128 covers the PostgreSQL pools (at most 30 connections), Node.js's own
 * descriptors (stdio, epoll, pipes of child processes), the listeners and a few dozen admin
 * API connections; the 5 % grows with the fleet for what grows with it (admin clients,
 * artifact downloads, files being read). The connections above `maxStreams` let a refused
 * agent be told RESOURCE_EXHAUSTED instead of a TCP reset, and let a reconnecting agent's
 * new connection overlap its old one. With L = 20 000: 18 872 connections, 17 928 streams;
 * with L = 256: 115 connections, 107 streams.
 */
import { readOpenFileLimit } from "../shared/open-file-limit.js";

/** Descriptors kept aside whatever the limit: database pools, Node.js itself, admin API. */
export const FIXED_FD_RESERVE = 128;

/** Streams allowed when the open-file limit cannot be read (not Linux) and none is configured. */
export const FALLBACK_MAX_STREAMS = 10_000;

/** What one Control process may hold on its agent listener. */
export interface StreamBudget {
  /** Agent streams held at once (handshaking or live); the next one is refused. */
  readonly maxStreams: number;
  /** TCP connections the agent listener holds at once; the next one is closed at accept. */
  readonly maxConnections: number;
  /** The soft open-file limit this was derived from; undefined where it is unknown. */
  readonly openFileLimit: number | undefined;
  /** Where `maxStreams` came from. */
  readonly source: "configured" | "open-file limit" | "fallback";
  /**
   * Set when the configured `maxStreams` needs more descriptors than the open-file limit
   * leaves: connections are then capped below it, so streams are refused at TCP first.
   */
  readonly warning?: string;
}

/** Connections allowed above `maxStreams`: 5 %, at least 8. */
export function connectionHeadroom(maxStreams: number): number {
  return Math.max(8, Math.ceil(maxStreams / 20));
}

/** Descriptors of a process with open-file limit `limit` left for agent connections. */
export function agentConnectionBudget(limit: number): number {
  return Math.max(1, limit - FIXED_FD_RESERVE - Math.ceil(limit / 20));
}

/**
 * The stream budget for a configured `maxStreams` (undefined: derive it) and an open-file
 * limit (undefined: unknown). Pure; {@link currentStreamBudget} reads the process's limit.
 */
export function streamBudget(
  configured: number | undefined,
  openFileLimit: number | undefined,
): StreamBudget {
  if (openFileLimit === undefined) {
    const maxStreams = configured ?? FALLBACK_MAX_STREAMS;
    return {
      maxStreams,
      maxConnections: maxStreams + connectionHeadroom(maxStreams),
      openFileLimit,
      source: configured === undefined ? "fallback" : "configured",
    };
  }
  const connections = agentConnectionBudget(openFileLimit);
  if (configured === undefined) {
    return {
      maxStreams: Math.max(1, connections - connectionHeadroom(connections)),
      maxConnections: connections,
      openFileLimit,
      source: "open-file limit",
    };
  }
  const wanted = configured + connectionHeadroom(configured);
  if (wanted <= connections) {
    return { maxStreams: configured, maxConnections: wanted, openFileLimit, source: "configured" };
  }
  return {
    maxStreams: configured,
    maxConnections: connections,
    openFileLimit,
    source: "configured",
    warning:
      `limits.maxStreams ${configured} needs about ${wanted} descriptors but the open-file ` +
      `limit ${openFileLimit} leaves ${connections} for agent connections: connections ` +
      `beyond ${connections} are closed at accept (raise the limit with ulimit -n / LimitNOFILE)`,
  };
}

/** {@link streamBudget} with this process's open-file limit. */
export function currentStreamBudget(configured: number | undefined): StreamBudget {
  return streamBudget(configured, readOpenFileLimit());
}
