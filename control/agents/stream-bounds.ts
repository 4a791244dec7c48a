/**
 * The bounds on the agent streams one Control serves: how many streams it holds at once
 * (`limits.maxStreams`), how many handshakes are in progress (`limits.maxConcurrentHandshakes`)
 * and how many of those one credential holds (`limits.handshakesPerCredential`). Each is taken
 * without waiting; a refusal is counted (for `/metrics`) before the stream is answered
 * RESOURCE_EXHAUSTED. A stream refused for `maxStreams` costs no database work; the handshake
 * bounds are taken after the credential's (batched) read verified it, so they count only
 * credentials that verify.
 */
import { ControlError, type ErrorCode } from "../errors.js";
import type { StreamIdentity } from "./authenticate.js";
import { type CredentialSlots, credentialKey } from "./credential-slots.js";

/**
 * How a handshake ended: `welcomed`, `abandoned` (the stream ended before the Welcome), or
 * the code of the error that ended the stream (`unauthenticated`, `invalid_argument`, …).
 */
export type HandshakeResult = "welcomed" | "abandoned" | ErrorCode;

/** Why a stream was refused before its handshake: which limit was full. */
export type StreamRefusal = "max_streams" | "max_handshakes" | "max_handshakes_per_credential";

/** The limits a stream passes before and during its handshake. */
export interface StreamBounds {
  /** Handshakes in progress: released with whether the stream was welcomed. */
  readonly handshakes: { tryAcquire(): boolean; release(welcomed: boolean): void };
  /** Handshakes in progress per credential (`limits.handshakesPerCredential`); unset: no cap. */
  readonly credentialHandshakes?: CredentialSlots;
  /**
   * Limits the streams held, from their first byte to their end (`limits.maxStreams`);
   * false = refuse this one with RESOURCE_EXHAUSTED before any other work.
   */
  readonly streams: { tryAcquire(): boolean; release(): void };
  /** Told of every stream refused for a limit (for `/metrics`). */
  readonly refused: (reason: StreamRefusal) => void;
}

/**
 * Takes a stream slot. False when `limits.maxStreams` streams are held: nothing is taken and
 * the refusal has been counted; the caller answers RESOURCE_EXHAUSTED.
 */
export function admitStream(bounds: StreamBounds): boolean {
  if (bounds.streams.tryAcquire()) return true;
  bounds.refused("max_streams");
  return false;
}

/**
 * Takes a handshake slot for a stream whose credential authentication verified as `identity`:
 * one of the credential's (when capped), then one of all handshakes. Taken only once the
 * credential verified, so a forged one (an id without its secret) holds none. Returns the function that gives both back, to be called exactly once with whether
 * the stream was welcomed. Throws `resource_exhausted` (and holds nothing, the refusal counted)
 * when either is full.
 */
export function admitHandshake(
  bounds: StreamBounds,
  identity: StreamIdentity,
): (welcomed: boolean) => void {
  const perCredential = bounds.credentialHandshakes;
  const key = perCredential && credentialKey(identity);
  if (perCredential && key !== undefined && !perCredential.tryAcquire(key)) {
    bounds.refused("max_handshakes_per_credential");
    throw new ControlError(
      "resource_exhausted",
      `this credential already has ${perCredential.limitOf(key)} handshakes in progress (limits.handshakesPerCredential${key.startsWith("ajt:") ? ", more for a join token" : ""}): retry with backoff`,
    );
  }
  if (!bounds.handshakes.tryAcquire()) {
    if (key !== undefined) perCredential?.release(key);
    bounds.refused("max_handshakes");
    throw new ControlError(
      "resource_exhausted",
      "too many agents are connecting at once: retry with backoff",
    );
  }
  return (welcomed) => {
    bounds.handshakes.release(welcomed);
    if (key !== undefined) perCredential?.release(key);
  };
}
