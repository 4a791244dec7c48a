/**
 * Admin calls refused because the token's role may not make them (a viewer trying an operator
 * RPC) are audited as `admin.permission_denied` and logged at warn: a token probing what it may
 * do is a fact an operator wants to see, as a failed authentication is (auth-failures.ts).
 *
 * Bounded: at most one event and one log line per token per window (one minute), each counting
 * the refusals of that token since its previous one. The key is the token's configured name,
 * not the client's address: only a token that authenticated is refused this way, so the keys
 * are at most the configured tokens, and a token that calls from many addresses still writes
 * one row a minute. A flood therefore grows the audit table by one row per token per minute.
 */
import type pg from "pg";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";

/** One call refused for its role: the token's name, the RPC, the client, the refusal. */
export interface PermissionDenial {
  readonly token: string;
  readonly method: string;
  readonly peer: string;
  readonly message: string;
}

/** Options of {@link permissionDeniedAuditor}. */
export interface PermissionDeniedAuditorOptions {
  readonly pool: pg.Pool;
  readonly clock: Clock;
  readonly log: Logger;
  /** At most one event and one log line per token per this many ms (default one minute). */
  readonly windowMs?: number;
}

/** The log line of a refusal (one per token per window). */
export const PERMISSION_DENIED_LOG = "admin call refused: the token's role may not call it";

/**
 * A sink for {@link PermissionDenial}s: one `admin.permission_denied` audit event (actor: the
 * token's name) and one warn line per token per window, counting the refusals suppressed before
 * it. Never throws; a failed write is logged.
 */
export function permissionDeniedAuditor(
  o: PermissionDeniedAuditorOptions,
): (denial: PermissionDenial) => void {
  const windowMs = o.windowMs ?? 60_000;
  const last = new Map<string, { at: number; suppressed: number }>();
  return (denial) => {
    const now = o.clock.now();
    const seen = last.get(denial.token);
    if (seen && now.getTime() - seen.at < windowMs) {
      seen.suppressed += 1;
      return;
    }
    const before = seen?.suppressed ?? 0;
    last.set(denial.token, { at: now.getTime(), suppressed: 0 });
    if (last.size > 10_000) last.delete(last.keys().next().value as string);
    const more = before > 0 ? ` (and ${before} more since the previous event)` : "";
    const from = denial.peer || "an unknown address";
    o.log.warn(
      {
        tokenName: denial.token,
        method: denial.method,
        peer: denial.peer,
        suppressedBefore: before,
      },
      PERMISSION_DENIED_LOG,
    );
    o.pool
      .query(
        `insert into audit_events (time, actor, actor_ip, action, message, detail)
         values ($1, $2, $3, 'admin.permission_denied', $4, $5::jsonb)`,
        [
          now,
          denial.token,
          denial.peer,
          `admin token ${denial.token} from ${from} refused calling ${denial.method}: ${denial.message}${more}`,
          JSON.stringify({ method: denial.method, suppressedBefore: before }),
        ],
      )
      .catch((error: unknown) =>
        o.log.warn({ err: error }, "could not audit an admin call refused for its role"),
      );
  };
}
