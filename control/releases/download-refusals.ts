/**
 * The log of refused downloads (401): one info line per client address per minute at most,
 * with how many were refused since its last line, so an operator sees why agents fail
 * without a fleet retrying every few seconds flooding the log.
 */

/** Where refusals are logged (a pino logger fits). */
export interface RefusalLogger {
  info(fields: object, message: string): void;
}

/** Options of {@link downloadRefusalLog}. */
export interface DownloadRefusalLogOptions {
  readonly log: RefusalLogger;
  /** Milliseconds now (default `Date.now`). */
  readonly now?: () => number;
  /** At most one line per client in this long (default one minute). */
  readonly windowMs?: number;
  /** Clients remembered at once; past it, those whose window is over are forgotten. */
  readonly maxClients?: number;
}

/** Records refusals; {@link DownloadRefusalLog.refused} logs or counts one. */
export interface DownloadRefusalLog {
  /** A download from `client` (its address) refused for `reason`. */
  refused(client: string, reason: string): void;
}

interface ClientEntry {
  /** When its last line was written. */
  loggedAt: number;
  /** Refusals since that line, not yet logged. */
  unlogged: number;
}

/**
 * Logs the first refusal of a client at once (`refused: 1`), then at most one line per
 * `windowMs` for it, counting (`refused`) every refusal since its previous line.
 */
export function downloadRefusalLog(options: DownloadRefusalLogOptions): DownloadRefusalLog {
  const now = options.now ?? Date.now;
  const windowMs = options.windowMs ?? 60_000;
  const maxClients = options.maxClients ?? 10_000;
  const clients = new Map<string, ClientEntry>();
  return {
    refused(client, reason) {
      const at = now();
      const entry = clients.get(client);
      if (entry !== undefined && at - entry.loggedAt < windowMs) {
        entry.unlogged += 1;
        return;
      }
      const refused = (entry?.unlogged ?? 0) + 1;
      if (entry === undefined && clients.size >= maxClients) {
        for (const [key, old] of clients) if (at - old.loggedAt >= windowMs) clients.delete(key);
      }
      clients.set(client, { loggedAt: at, unlogged: 0 });
      options.log.info(
        { client, refused, windowSeconds: Math.round(windowMs / 1000), reason: reason.trim() },
        "download refused (401): no valid node credential",
      );
    },
  };
}
