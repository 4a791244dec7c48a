/**
 * Failed admin authentications are audited, at most one event per client address per
 * window, so someone guessing tokens leaves a trace without being able to flood the audit log.
 * (Every failure is also counted: `agent_control_admin_requests_refused_total{reason=
 * "unauthenticated"}`.)
 */
import type pg from "pg";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";

/** One refused call: its method, client address and the refusal's message. */
export interface AuthFailure {
  readonly method: string;
  readonly peer: string;
  readonly message: string;
}

/** Options of {@link authFailureAuditor}. */
export interface AuthFailureAuditorOptions {
  readonly pool: pg.Pool;
  readonly clock: Clock;
  readonly log: Logger;
  /** At most one event per address per this many ms (default one minute). */
  readonly windowMs?: number;
}

/**
 * A sink for {@link AuthFailure}s that writes `admin.auth_failed` audit events, one per address
 * per window, each counting the failures of that address since its previous event. Never
 * throws; a failed write is logged.
 */
export function authFailureAuditor(o: AuthFailureAuditorOptions): (failure: AuthFailure) => void {
  const windowMs = o.windowMs ?? 60_000;
  const last = new Map<string, { at: number; suppressed: number }>();
  return (failure) => {
    const now = o.clock.now();
    const seen = last.get(failure.peer);
    if (seen && now.getTime() - seen.at < windowMs) {
      seen.suppressed += 1;
      return;
    }
    const before = seen?.suppressed ?? 0;
    last.set(failure.peer, { at: now.getTime(), suppressed: 0 });
    if (last.size > 10_000) last.delete(last.keys().next().value as string);
    const more = before > 0 ? ` (and ${before} more since the previous event)` : "";
    o.pool
      .query(
        `insert into audit_events (time, actor, actor_ip, action, message, detail)
         values ($1, 'unauthenticated', $2, 'admin.auth_failed', $3, $4::jsonb)`,
        [
          now,
          failure.peer,
          `admin authentication failed from ${failure.peer || "an unknown address"} calling ${failure.method}: ${failure.message}${more}`,
          JSON.stringify({ method: failure.method, suppressedBefore: before }),
        ],
      )
      .catch((error: unknown) =>
        o.log.warn({ err: error }, "could not audit a failed admin login"),
      );
  };
}
