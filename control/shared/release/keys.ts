/**
 * Ed25519 release keys: generation, pins (the public form configured in Control and the
 * Agent), key ids (hints), and the private key file.
 */
import * as ed from "@noble/ed25519";
import { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "./base64.js";
import { sha256Hex } from "./digest.js";
import { ReleaseError } from "./errors.js";
import { isJsonObject, parseStrictJson } from "./strict-json.js";

/** Length of an ed25519 public key, private key (seed) and half a signature, in bytes. */
export const ED25519_KEY_LENGTH = 32;

/** Length of an ed25519 signature in bytes. */
export const ED25519_SIGNATURE_LENGTH = 64;

/** The prefix of every pin: `ed25519:` followed by the unpadded base64url public key. */
export const PIN_PREFIX = "ed25519:";

/** The `kind` of a private key file. */
export const PRIVATE_KEY_KIND = "agent-control-release-signing-key";

/** A freshly generated key pair with its derived public identifiers. */
export interface ReleaseKeyPair {
  /** The 32-byte ed25519 seed (RFC 8032 private key). Secret. */
  privateKey: Uint8Array;
  /** The 32-byte ed25519 public key. */
  publicKey: Uint8Array;
  /** `formatPin(publicKey)`. */
  pin: string;
  /** `keyIdOf(publicKey)`. */
  keyid: string;
}

/** Generates a new ed25519 key pair from the platform CSPRNG (`crypto.getRandomValues`). */
export async function generateKeyPair(): Promise<ReleaseKeyPair> {
  const privateKey = ed.utils.randomSecretKey();
  const publicKey = await ed.getPublicKeyAsync(privateKey);
  return { privateKey, publicKey, pin: formatPin(publicKey), keyid: keyIdOf(publicKey) };
}

/** The 32-byte public key of a 32-byte private key. Throws `bad_key` for a wrong length. */
export async function publicKeyOf(privateKey: Uint8Array): Promise<Uint8Array> {
  assertPrivateKey(privateKey);
  return ed.getPublicKeyAsync(privateKey);
}

/**
 * The pin of a public key: `ed25519:` + unpadded base64url of the 32 bytes (51 characters,
 * e.g. `ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo`). Throws `bad_key` unless the
 * key is accepted by {@link parsePin}, so a formatted pin always parses back.
 */
export function formatPin(publicKey: Uint8Array): string {
  assertPublicKey(publicKey);
  return `${PIN_PREFIX}${encodeBase64Url(publicKey)}`;
}

/**
 * Parses a pin (see {@link formatPin}) into its 32-byte public key. Refuses, with `bad_key`:
 * another prefix, non-canonical base64url, any length but 32 bytes, an encoding that is not
 * a canonical curve point, and small-order points (which strict verification would reject
 * anyway, so such a pin could never count).
 */
export function parsePin(pin: string): Uint8Array {
  if (typeof pin !== "string" || !pin.startsWith(PIN_PREFIX)) {
    throw new ReleaseError(
      "bad_key",
      `a pin must look like "ed25519:<base64url public key>", found ${preview(pin)}`,
    );
  }
  const key = decodeBase64Url(pin.slice(PIN_PREFIX.length));
  if (key === undefined) {
    throw new ReleaseError("bad_key", `pin ${preview(pin)} is not canonical unpadded base64url`);
  }
  if (key.length !== ED25519_KEY_LENGTH) {
    throw new ReleaseError(
      "bad_key",
      `pin ${preview(pin)} holds ${key.length} bytes; an ed25519 public key is exactly 32`,
    );
  }
  assertPublicKey(key);
  return key;
}

/**
 * A short identifier of a public key: the first 16 hex characters (64 bits) of
 * SHA-256(publicKey). Written into envelopes as `keyid`. It is a HINT only: verification
 * never trusts it to decide which key signed. Throws `bad_key` for a wrong length.
 */
export function keyIdOf(publicKey: Uint8Array): string {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_KEY_LENGTH) {
    throw new ReleaseError("bad_key", "an ed25519 public key is exactly 32 bytes");
  }
  return sha256Hex(publicKey).slice(0, 16);
}

/**
 * The private key file: UTF-8 JSON with exactly
 * `{"kind": "agent-control-release-signing-key", "alg": "ed25519", "key": <standard base64 of the 32-byte seed>}`,
 * 2-space indented, trailing newline. The CLI writes it with mode 0600.
 */
export function serializePrivateKey(privateKey: Uint8Array): string {
  assertPrivateKey(privateKey);
  const doc = { kind: PRIVATE_KEY_KIND, alg: "ed25519", key: encodeBase64(privateKey) };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * Parses a private key file (see {@link serializePrivateKey}) into the 32-byte seed.
 * Strict: exactly those keys, those `kind` and `alg` values, canonical base64, 32 bytes.
 * Throws `bad_key`; the message never includes the key material.
 */
export function parsePrivateKey(text: string): Uint8Array {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new ReleaseError("bad_key", `the private key file ${parsed.problem}`);
  const doc = parsed.value;
  if (
    !isJsonObject(doc) ||
    Object.keys(doc).length !== 3 ||
    doc.kind !== PRIVATE_KEY_KIND ||
    doc.alg !== "ed25519" ||
    typeof doc.key !== "string"
  ) {
    throw new ReleaseError(
      "bad_key",
      `the private key file must be exactly {"kind": "${PRIVATE_KEY_KIND}", "alg": "ed25519", "key": "<base64>"}`,
    );
  }
  const key = decodeBase64(doc.key);
  if (key === undefined || key.length !== ED25519_KEY_LENGTH) {
    throw new ReleaseError(
      "bad_key",
      "the private key file's key must be canonical standard base64 of exactly 32 bytes",
    );
  }
  return key;
}

/** Throws `bad_key` unless `privateKey` is a 32-byte array. */
export function assertPrivateKey(privateKey: Uint8Array): void {
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== ED25519_KEY_LENGTH) {
    throw new ReleaseError("bad_key", "an ed25519 private key is exactly 32 bytes");
  }
}

function assertPublicKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== ED25519_KEY_LENGTH) {
    throw new ReleaseError("bad_key", "an ed25519 public key is exactly 32 bytes");
  }
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(key, false);
  } catch {
    throw new ReleaseError(
      "bad_key",
      `public key ${encodeBase64Url(key)} is not a canonical ed25519 point`,
    );
  }
  if (point.isSmallOrder()) {
    throw new ReleaseError(
      "bad_key",
      `public key ${encodeBase64Url(key)} is a small-order point and can never verify`,
    );
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 70 ? `${text.slice(0, 67)}...` : text;
}
