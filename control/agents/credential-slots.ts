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

/**
 * The handshakes one join token may hold at once, given `limits.handshakesPerCredential`
 * (`perCredential`) and the fewest handshakes Control admits whatever its rate
 * (`admittedAtLeast`, handshake-admission.ts). A fleet being provisioned presents one join
 * token from every machine at once, where a node token or a certificate is one machine's, so a
 * join token gets up to 8 × `perCredential` — but never more than half of `admittedAtLeast`
 * (and never fewer than `perCredential`), so one leaked join token still leaves the other half
 * of the handshakes to everyone else. Defaults: 4 and 64 give 32.
 */
export function joinTokenHandshakes(perCredential: number, admittedAtLeast: number): number {
  return Math.max(perCredential, Math.min(perCredential * 8, Math.floor(admittedAtLeast / 2)));
}

/**
 * At most `limit` holders per key at once (a join token's key, `ajt:…`: `joinTokenLimit`),
 * acquired without waiting.
 */
export class CredentialSlots {
  readonly #held = new Map<string, number>();

  /**
   * @param limit holders allowed per key (≥ 1).
   * @param joinTokenLimit holders allowed per join token (≥ 1; default `limit`), see
   * {@link joinTokenHandshakes}.
   */
  constructor(
    readonly limit: number,
    readonly joinTokenLimit: number = limit,
  ) {
    for (const [name, value] of [
      ["limit", limit],
      ["joinTokenLimit", joinTokenLimit],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`${name} must be a positive integer, got ${value}`);
      }
    }
  }

  /** Holders allowed for `key` at once: a join token's ({@link credentialKey} `ajt:`) own. */
  limitOf(key: string): number {
    return key.startsWith("ajt:") ? this.joinTokenLimit : this.limit;
  }

  /** Holders of `key` now. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /** Keys with a holder now (the map never keeps a key with none). */
  get keys(): number {
    return this.#held.size;
  }

  /** Takes a slot of `key`; false (and nothing taken) when {@link limitOf} `key` are held. */
  tryAcquire(key: string): boolean {
    const held = this.held(key);
    if (held >= this.limitOf(key)) return false;
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
