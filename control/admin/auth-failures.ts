/**
 * Failed admin authentications are audited, at most one event per client address per
 * window, so someone guessing tokens leaves a trace without being able to flood the audit log,
 * and every one is counted by why it failed: `agent_control_admin_auth_failures_total{reason}`
 * (also in `agent_control_admin_requests_refused_total{reason="unauthenticated"}`).
 */
import type pg from "pg";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { ControlMetrics } from "../metrics/registry.js";
import { permissionDeniedAuditor } from "./auth-denials.js";

/** Why an admin authentication failed, as the metric labels it. */
export type AuthFailureReason = "missing_token" | "unknown_token" | "expired_token" | "other";

/** Every {@link AuthFailureReason}, each exported at 0 from the start. */
export const AUTH_FAILURE_REASONS: readonly AuthFailureReason[] = [
  "missing_token",
  "unknown_token",
  "expired_token",
  "other",
];

/** The reason of a refusal, from the message `authenticate` (auth.ts) gave it. */
export function authFailureReason(message: string): AuthFailureReason {
  if (message.startsWith("missing bearer token")) return "missing_token";
  if (message.startsWith("unknown admin token")) return "unknown_token";
  if (message.startsWith("token expired at")) return "expired_token";
  return "other";
}

/**
 * The sink Control gives the admin server: counts each failure in
 * `agent_control_admin_auth_failures_total{reason}`, then audits it ({@link authFailureAuditor});
 * a call refused for its role ({@link AuthFailure.deniedTo}) goes to auth-denials.ts instead.
 */
export function authFailureSink(
  o: AuthFailureAuditorOptions & { readonly metrics: ControlMetrics },
): (failure: AuthFailure) => void {
  const failures = o.metrics.counter(
    "agent_control_admin_auth_failures_total",
    "Admin calls refused as unauthenticated, by reason: missing_token, unknown_token, expired_token.",
    ["reason"],
    AUTH_FAILURE_REASONS.map((reason) => ({ reason })),
  );
  const audit = authFailureAuditor(o);
  const denied = permissionDeniedAuditor(o);
  return (failure) => {
    if (failure.deniedTo !== undefined) {
      const { deniedTo: token, method, peer, message } = failure;
      denied({ token, method, peer, message });
      return;
    }
    failures.inc({ reason: authFailureReason(failure.message) });
    audit(failure);
  };
}

/** One refused call: its method, client address and the refusal's message. */
export interface AuthFailure {
  readonly method: string;
  readonly peer: string;
  readonly message: string;
  /**
   * Set when the token authenticated but its role may not call `method`: the token's name.
   * Such a refusal is no authentication failure: it is audited by auth-denials.ts instead.
   */
  readonly deniedTo?: string;
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
