/**
 * Handshakes in progress per credential (`limits.handshakesPerCredential`), beside the
 * admission of all handshakes (handshake-admission.ts): one credential — a join token, a node
 * token, a client certificate — holds at most `limit` handshakes at once, so a storm from one
 * leaked join token (streams that connect and stay silent until the Hello timeout) holds a few
 * slots, never all of them, and a node token's handshake still finds one. The key is read from
 * the stream's metadata before anything is looked up ({@link credentialKey}); the excess is
 * refused RESOURCE_EXHAUSTED before any database work.
 */
import type { PeerCertificate } from "node:tls";
import { bearerToken, parseCredential } from "../auth/secrets.js";

/**
 * The key a stream's handshakes are counted under: the client certificate's fingerprint, else
 * the bearer credential's kind and id (`ajt:ID` for a join token, the node token's id), else
 * `unauthenticated`, one key for every stream without a credential that parses. Pure: nothing
 * is verified here, that is authentication's work.
 */
export function credentialKey(
  authorization: string | undefined,
  peerCertificate: PeerCertificate | undefined,
): string {
  if (peerCertificate?.fingerprint256) return `certificate:${peerCertificate.fingerprint256}`;
  const token = bearerToken(authorization);
  const credential = token ? parseCredential(token) : undefined;
  return credential ? `${credential.kind}:${credential.id}` : "unauthenticated";
}

/** At most `limit` holders per key at once, acquired without waiting. */
export class CredentialSlots {
  readonly #held = new Map<string, number>();

  /** @param limit holders allowed per key (≥ 1). */
  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`limit must be a positive integer, got ${limit}`);
    }
  }

  /** Holders of `key` now. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Keys with a holder now (the map never keeps a key with none). */
  get keys(): number {
    return this.#held.size;
  }

  /** Takes a slot of `key`; false (and nothing taken) when `limit` are held. */
  tryAcquire(key: string): boolean {
    const held = this.held(key);
    if (held >= this.limit) return false;
    this.#held.set(key, held + 1);
    return true;
  }

  /** Gives back a slot of `key` taken by {@link tryAcquire}; once per successful acquire. */
  release(key: string): void {
    const held = this.held(key);
    if (held <= 1) this.#held.delete(key);
    else this.#held.set(key, held - 1);
  }
}
