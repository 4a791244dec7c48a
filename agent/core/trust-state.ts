/**
 * The Agent's trust state: what its last TUF refresh found, and whether that made it frozen.
 * Pure: the state after a verdict, and whether the change is one to tell (frozen ⇄ current).
 */

/** A TUF verdict as the trust state reads it (structurally `TufVerdict`). */
export type TrustVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** The last TUF check, as the durable state keeps it and `agent status` prints it. */
export interface TrustState {
  /** The newest trusted metadata had expired and no fresh metadata could be fetched. */
  frozen: boolean;
  /** When the check ran (ISO 8601). */
  checkedAt: string;
  /** When the Agent first found itself frozen, kept while it stays frozen (ISO 8601). */
  since?: string;
  /** The refusal's code and message, when the check did not pass. */
  code?: string;
  message?: string;
}

/** The state after a check, and whether it crossed between frozen and not frozen. */
export interface TrustTransition {
  readonly state: TrustState;
  /** True when `frozen` differs from the previous state's (no previous state: not frozen). */
  readonly changed: boolean;
}

/**
 * The trust state after `verdict` at `now`. Frozen exactly when the verdict is
 * `metadata_expired`; `since` is kept from a previous frozen state, else it is `now`. Any
 * other verdict (listed, not listed, unreachable while still unexpired) is not a freeze.
 */
export function nextTrustState(
  previous: TrustState | undefined,
  verdict: TrustVerdict,
  now: Date,
): TrustTransition {
  const frozen = !verdict.ok && verdict.code === "metadata_expired";
  const wasFrozen = previous?.frozen === true;
  const since = frozen
    ? wasFrozen
      ? (previous.since ?? previous.checkedAt)
      : now.toISOString()
    : undefined;
  const state: TrustState = {
    frozen,
    checkedAt: now.toISOString(),
    ...(since !== undefined ? { since } : {}),
    ...(verdict.ok ? {} : { code: verdict.code, message: verdict.message }),
  };
  return { state, changed: frozen !== wasFrozen };
}

/** What {@link noteTrust} updates: an agent's durable state and its change hook. */
export interface TrustHolder {
  readonly state: { trust?: TrustState };
  /** Told of each change between frozen and not frozen (log, persist, report it). */
  trustChanged?(state: TrustState): void;
}

/**
 * Records `verdict` as `holder`'s trust state at `now` and, when it crossed between frozen
 * and not frozen, tells `holder.trustChanged`. The caller persists the state.
 */
export function noteTrust(holder: TrustHolder, verdict: TrustVerdict, now: Date): TrustTransition {
  const transition = nextTrustState(holder.state.trust, verdict, now);
  holder.state.trust = transition.state;
  if (transition.changed) holder.trustChanged?.(transition.state);
  return transition;
}
