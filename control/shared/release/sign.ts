/**
 * Offline signing of a release envelope.
 */
import * as ed from "@noble/ed25519";
import {
  assertEnvelopeShape,
  type Envelope,
  MAX_SIGNATURES,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
} from "./envelope.js";
import { ReleaseError } from "./errors.js";
import { assertPrivateKey, keyIdOf } from "./keys.js";
import { parseManifest } from "./manifest.js";

/**
 * Returns a new envelope (the input is not modified) with a signature by `privateKey` over
 * `preAuthEncoding(payloadType, payload)`, keyid `keyIdOf(publicKey)`.
 *
 * Signing is idempotent per key: an existing signature with the same keyid is replaced in
 * place (ed25519 is deterministic, so re-signing the same payload yields the same bytes);
 * otherwise the signature is appended. Refuses to sign what no verifier would accept:
 * a payload type other than {@link RELEASE_PAYLOAD_TYPE} (`wrong_payload_type`) or an invalid
 * manifest (its `parseManifest` reason). Expiry is not checked (no clock here). Throws
 * `bad_key` for a private key that is not 32 bytes, `malformed_envelope` for a bad shape or
 * when the envelope already holds the maximum number of signatures.
 */
export async function signEnvelope(envelope: Envelope, privateKey: Uint8Array): Promise<Envelope> {
  assertPrivateKey(privateKey);
  assertEnvelopeShape(envelope);
  if (envelope.payloadType !== RELEASE_PAYLOAD_TYPE) {
    throw new ReleaseError(
      "wrong_payload_type",
      `refusing to sign payload type ${JSON.stringify(envelope.payloadType)}; expected "${RELEASE_PAYLOAD_TYPE}"`,
    );
  }
  parseManifest(envelope.payload);
  const publicKey = await ed.getPublicKeyAsync(privateKey);
  const keyid = keyIdOf(publicKey);
  const sig = await ed.signAsync(
    preAuthEncoding(envelope.payloadType, envelope.payload),
    privateKey,
  );
  const signatures = envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig.slice() }));
  const existing = signatures.findIndex((s) => s.keyid === keyid);
  if (existing >= 0) {
    signatures[existing] = { keyid, sig };
  } else if (signatures.length >= MAX_SIGNATURES) {
    throw new ReleaseError(
      "malformed_envelope",
      `the envelope already has ${MAX_SIGNATURES} signatures, the most allowed`,
    );
  } else {
    signatures.push({ keyid, sig });
  }
  return { payloadType: envelope.payloadType, payload: envelope.payload.slice(), signatures };
}
