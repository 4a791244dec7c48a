/**
 * Verification of a signed release envelope against pinned keys: the one gate every
 * consumer (Control's RegisterRelease, the Agent, agentctl) passes a release through.
 */
import * as ed from "@noble/ed25519";
import {
  assertEnvelopeShape,
  type Envelope,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
} from "./envelope.js";
import { ReleaseError } from "./errors.js";
import { ED25519_SIGNATURE_LENGTH, keyIdOf, parsePin } from "./keys.js";
import { parseManifest, type ReleaseManifest } from "./manifest.js";
import { parseRfc3339 } from "./timestamp.js";

/**
 * What to trust: `pins` (see `formatPin`; duplicates count once), how many distinct pinned
 * keys must have signed (`threshold`, a positive integer no larger than the number of
 * distinct pins), and the time to check expiry against (`now`, from the caller's Clock).
 */
export interface VerifyOptions {
  pins: readonly string[];
  threshold: number;
  now: Date;
}

/**
 * A release that passed every check. `signerKeyIds` are the key ids of the DISTINCT pinned
 * keys with a valid signature (computed from the pinned keys, not copied from the
 * envelope's hints), in signature order; `payload` the exact signed bytes; `expiresAt` the
 * manifest's `expires` as a Date.
 */
export interface VerifiedRelease {
  manifest: ReleaseManifest;
  signerKeyIds: string[];
  payload: Uint8Array;
  expiresAt: Date;
}

interface Pinned {
  key: Uint8Array;
  keyid: string;
}

/**
 * Verifies `envelope` and returns the release it carries, or throws {@link ReleaseError}.
 * Checks run in this order, and the first failure is reported:
 *
 * 1. options: every pin valid (`bad_key`), threshold a positive integer not above the
 *    distinct pins (`bad_threshold`); an invalid `now` Date is a TypeError;
 * 2. envelope shape (`malformed_envelope`);
 * 3. `payloadType` equals {@link RELEASE_PAYLOAD_TYPE} (`wrong_payload_type`);
 * 4. at least `threshold` valid signatures over PAE(payloadType, exact payload bytes) from
 *    distinct pinned keys (`insufficient_signatures`). Every pinned key is tried against
 *    every signature (pins whose key id matches the signature's keyid hint are tried first,
 *    the hint never decides); a key counts once however often it signed. Verification is
 *    strict RFC 8032 (`zip215: false`): signatures of any length but 64 bytes never count,
 *    non-canonical S (S ≥ L) and non-canonical or small-order points are refused;
 * 5. manifest (see `parseManifest` for its reasons);
 * 6. not expired: `now` strictly before `expires` (`expired`).
 *
 * So the meaning of an unsigned or forged payload is never examined: it can only produce
 * `insufficient_signatures`, never a more specific refusal.
 */
export async function verifyEnvelope(
  envelope: Envelope,
  options: VerifyOptions,
): Promise<VerifiedRelease> {
  const pinned = checkOptions(options);
  assertEnvelopeShape(envelope);
  if (envelope.payloadType !== RELEASE_PAYLOAD_TYPE) {
    throw new ReleaseError(
      "wrong_payload_type",
      `the envelope's payload type is ${JSON.stringify(envelope.payloadType)}; expected "${RELEASE_PAYLOAD_TYPE}"`,
    );
  }
  const message = preAuthEncoding(envelope.payloadType, envelope.payload);
  const counted = new Set<Pinned>();
  const signerKeyIds: string[] = [];
  let wrongLength = 0;
  let repeated = 0;
  let unmatched = 0;
  for (const signature of envelope.signatures) {
    if (signature.sig.length !== ED25519_SIGNATURE_LENGTH) {
      wrongLength += 1;
      continue;
    }
    const fresh = pinned.filter((p) => !counted.has(p));
    const signer = await findSigner(signature.sig, signature.keyid, message, fresh);
    if (signer !== undefined) {
      counted.add(signer);
      signerKeyIds.push(signer.keyid);
    } else if (
      (await findSigner(signature.sig, signature.keyid, message, [...counted])) !== undefined
    ) {
      repeated += 1;
    } else {
      unmatched += 1;
    }
  }
  if (counted.size < options.threshold) {
    const details = [
      `${envelope.signatures.length} signature(s) present`,
      repeated > 0 ? `${repeated} repeating an already counted key` : "",
      unmatched > 0 ? `${unmatched} not valid for any pinned key` : "",
      wrongLength > 0 ? `${wrongLength} not ${ED25519_SIGNATURE_LENGTH} bytes long` : "",
    ].filter((d) => d !== "");
    throw new ReleaseError(
      "insufficient_signatures",
      `${options.threshold} valid signature(s) from distinct pinned keys are required, found ${counted.size} (${details.join("; ")})`,
    );
  }
  const manifest = parseManifest(envelope.payload);
  const expiresAt = parseRfc3339(manifest.expires)!;
  if (options.now.getTime() >= expiresAt.getTime()) {
    throw new ReleaseError(
      "expired",
      `release ${manifest.version} (sequence ${manifest.sequence}) expired at ${manifest.expires}; it is now ${options.now.toISOString()}`,
    );
  }
  return { manifest, signerKeyIds, payload: envelope.payload.slice(), expiresAt };
}

function checkOptions(options: VerifyOptions): Pinned[] {
  if (!(options.now instanceof Date) || Number.isNaN(options.now.getTime())) {
    throw new TypeError("verifyEnvelope needs a valid Date as options.now");
  }
  const pinned: Pinned[] = [];
  const seen = new Set<string>();
  options.pins.forEach((pin, index) => {
    let key: Uint8Array;
    try {
      key = parsePin(pin);
    } catch (error) {
      throw new ReleaseError("bad_key", `pinned key ${index + 1}: ${(error as Error).message}`);
    }
    const hex = Buffer.from(key).toString("hex");
    if (seen.has(hex)) return;
    seen.add(hex);
    const entry = { key, keyid: keyIdOf(key) };
    pinned.push(entry);
  });
  const { threshold } = options;
  if (!Number.isSafeInteger(threshold) || threshold < 1) {
    throw new ReleaseError(
      "bad_threshold",
      `the signature threshold must be a positive integer, found ${String(threshold)}`,
    );
  }
  if (threshold > pinned.length) {
    throw new ReleaseError(
      "bad_threshold",
      `the signature threshold ${threshold} exceeds the ${pinned.length} distinct pinned key(s)`,
    );
  }
  return pinned;
}

async function findSigner(
  sig: Uint8Array,
  keyidHint: string,
  message: Uint8Array,
  candidates: readonly Pinned[],
): Promise<Pinned | undefined> {
  const ordered = [
    ...candidates.filter((p) => p.keyid === keyidHint),
    ...candidates.filter((p) => p.keyid !== keyidHint),
  ];
  for (const candidate of ordered) {
    if (await verifyStrict(sig, message, candidate.key)) return candidate;
  }
  return undefined;
}

/**
 * Strict RFC 8032 ed25519 verification (`zip215: false`): false for wrong lengths,
 * non-canonical S or points, small-order keys, or a signature that does not verify.
 */
export async function verifyStrict(
  sig: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): Promise<boolean> {
  if (sig.length !== ED25519_SIGNATURE_LENGTH || publicKey.length !== 32) return false;
  try {
    return await ed.verifyAsync(sig, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
