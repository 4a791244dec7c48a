/**
 * Handshakes in progress per credential (`limits.handshakesPerCredential`), beside the
 * admission of all handshakes (handshake-admission.ts): one credential — a join token, a node
 * token, a client certificate — holds at most `limit` handshakes at once, so a storm from one
 * leaked join token holds a few slots, never all of them, and a node token's handshake still
 * finds one. A slot is keyed on the credential as authentication verified it
 * ({@link credentialKey}), never on what a stream merely claims: an id a forger writes into a
 * credential it cannot complete is refused by authentication and takes no slot, so it costs
 * neither the node it names nor the fleet anything. The excess is refused RESOURCE_EXHAUSTED.
 */
import type { StreamIdentity } from "./authenticate.js";

/**
 * The key an authenticated stream's handshakes are counted under: a join token by its id
 * (`ajt:ID`), a node token by its node (`ant:NODE`), a client certificate by its fingerprint.
 * Pure; `identity` is what authentication verified.
 */
export function credentialKey(identity: StreamIdentity): string {
  switch (identity.kind) {
    case "join":
      return `ajt:${identity.joinTokenId}`;
    case "node":
      return `ant:${identity.nodeId}`;
    case "certificate":
      return `certificate:${identity.certificate.fingerprint}`;
  }
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
