/**
 * Loads the golden release vectors of `test/fixtures/release/` and offers helpers that
 * build envelopes the public API deliberately refuses to build (bad manifests, raw
 * signatures).
 */
import { readFileSync } from "node:fs";
import * as ed from "@noble/ed25519";
import {
  createEnvelope,
  type Envelope,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
} from "../../../control/shared/release/index.js";

const fixturePath = (name: string) => new URL(`../../fixtures/release/${name}`, import.meta.url);

/** The raw bytes of a fixture file. */
export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath(name)));
}

/** The text of a fixture file. */
export function fixtureText(name: string): string {
  return readFileSync(fixturePath(name), "utf8");
}

interface FixtureKey {
  privateKeyHex: string;
  publicKeyHex: string;
  pin: string;
  keyid: string;
}

const keys = JSON.parse(fixtureText("keys.json")) as Record<"a" | "b" | "c", FixtureKey>;

/** One fixture key with its bytes decoded. */
export interface TestKey extends FixtureKey {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

function load(name: "a" | "b" | "c"): TestKey {
  const k = keys[name];
  return {
    ...k,
    privateKey: new Uint8Array(Buffer.from(k.privateKeyHex, "hex")),
    publicKey: new Uint8Array(Buffer.from(k.publicKeyHex, "hex")),
  };
}

/** The three fixture keys (RFC 8032 §7.1 TEST 1–3 secret keys). */
export const KEY_A = load("a");
export const KEY_B = load("b");
export const KEY_C = load("c");

/** All three pins, for 2-of-3 style tests. */
export const ALL_PINS = [KEY_A.pin, KEY_B.pin, KEY_C.pin] as const;

/** A time at which the fixture manifest (expiring 2030-01-01) is valid. */
export const NOW = new Date("2026-06-01T12:00:00Z");

/** The canonical fixture manifest as a JSON value, for tests that vary one field. */
export function fixtureManifestValue(): Record<string, unknown> {
  return JSON.parse(fixtureText("manifest.json")) as Record<string, unknown>;
}

/**
 * Signs arbitrary bytes as a release envelope WITHOUT validating them (unlike
 * `signEnvelope`), so tests can check what verification does with validly signed junk.
 */
export async function signRaw(
  payload: Uint8Array,
  signers: readonly TestKey[],
  payloadType: string = RELEASE_PAYLOAD_TYPE,
): Promise<Envelope> {
  const envelope = createEnvelope(payload);
  envelope.payloadType = payloadType;
  const pae = preAuthEncoding(payloadType, payload);
  for (const key of signers) {
    envelope.signatures.push({ keyid: key.keyid, sig: await ed.signAsync(pae, key.privateKey) });
  }
  return envelope;
}

/** UTF-8 bytes of a JSON value, compact. */
export function jsonBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
