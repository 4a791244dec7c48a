/**
 * The DSSE envelope (https://github.com/secure-systems-lab/dsse) that carries a manifest
 * and its signatures, in memory and as a JSON file.
 */
import { decodeBase64, encodeBase64 } from "./base64.js";
import { ReleaseError } from "./errors.js";
import { isJsonObject, parseStrictJson } from "./strict-json.js";

/** The DSSE payload type of an Agent release manifest; signatures are bound to it by PAE. */
export const RELEASE_PAYLOAD_TYPE = "application/vnd.agentcontrol.release.v1+json";

/** The largest envelope file {@link parseEnvelope} accepts, in bytes (1 MiB). */
export const MAX_ENVELOPE_BYTES = 1024 * 1024;

/** The most signatures an envelope may carry (bounds verification work). */
export const MAX_SIGNATURES = 16;

/** The longest key id accepted in an envelope (key ids are hints, not identities). */
export const MAX_KEYID_LENGTH = 256;

/** One signature: `keyid` is a hint naming the signer (see `keyIdOf`); `sig` the raw bytes. */
export interface EnvelopeSignature {
  keyid: string;
  sig: Uint8Array;
}

/**
 * A DSSE envelope: the exact `payload` bytes, their `payloadType`, and zero or more
 * signatures, each over `preAuthEncoding(payloadType, payload)`.
 */
export interface Envelope {
  payloadType: string;
  payload: Uint8Array;
  signatures: EnvelopeSignature[];
}

/**
 * DSSE v1 pre-authentication encoding, the exact bytes every signature covers:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, where LEN is the byte length in
 * ASCII decimal (no leading zeros) and `type` is UTF-8 encoded. Binding the type prevents a
 * signature over one kind of document being replayed as another.
 */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Uint8Array {
  const encoder = new TextEncoder();
  const type = encoder.encode(payloadType);
  const head = encoder.encode(`DSSEv1 ${type.length} `);
  const middle = encoder.encode(` ${payload.length} `);
  const out = new Uint8Array(head.length + type.length + middle.length + payload.length);
  out.set(head, 0);
  out.set(type, head.length);
  out.set(middle, head.length + type.length);
  out.set(payload, head.length + type.length + middle.length);
  return out;
}

/**
 * A new unsigned envelope of type {@link RELEASE_PAYLOAD_TYPE} holding a copy of
 * `manifestBytes` exactly as given (never re-serialised). Does not validate the manifest;
 * `signEnvelope` and `verifyEnvelope` do.
 */
export function createEnvelope(manifestBytes: Uint8Array): Envelope {
  return { payloadType: RELEASE_PAYLOAD_TYPE, payload: manifestBytes.slice(), signatures: [] };
}

/**
 * Parses the envelope file form: UTF-8 JSON
 * `{"payloadType": string, "payload": base64, "signatures": [{"keyid": string, "sig": base64}]}`.
 * Strict: exactly these keys (no extras, no duplicates), canonical standard base64 with
 * padding, a non-empty payload, at most {@link MAX_SIGNATURES} signatures, at most
 * {@link MAX_ENVELOPE_BYTES} bytes. `keyid` must be present (it may be empty). Signature
 * lengths are NOT checked here: a signature of the wrong length is kept and simply never
 * counts as valid in `verifyEnvelope`. Throws {@link ReleaseError} `malformed_envelope`.
 */
export function parseEnvelope(json: Uint8Array | string): Envelope {
  const size = typeof json === "string" ? Buffer.byteLength(json, "utf8") : json.length;
  if (size > MAX_ENVELOPE_BYTES) {
    throw malformed(`is ${size} bytes, larger than the ${MAX_ENVELOPE_BYTES}-byte limit`);
  }
  const parsed = parseStrictJson(json);
  if (!parsed.ok) throw malformed(parsed.problem);
  const doc = parsed.value;
  if (!isJsonObject(doc)) throw malformed("must be a JSON object");
  exactKeys(doc, ["payloadType", "payload", "signatures"], "the envelope");
  const { payloadType, payload, signatures } = doc;
  if (typeof payloadType !== "string") throw malformed("needs a string payloadType");
  if (typeof payload !== "string") throw malformed("needs a base64 string payload");
  const payloadBytes = decodeBase64(payload);
  if (payloadBytes === undefined) {
    throw malformed("has a payload that is not canonical standard base64 with padding");
  }
  if (payloadBytes.length === 0) throw malformed("has an empty payload");
  if (!Array.isArray(signatures)) throw malformed("needs a signatures array");
  if (signatures.length > MAX_SIGNATURES) {
    throw malformed(`has ${signatures.length} signatures; at most ${MAX_SIGNATURES} are allowed`);
  }
  return {
    payloadType,
    payload: payloadBytes,
    signatures: signatures.map((entry: unknown, index) => parseSignature(entry, index)),
  };
}

function parseSignature(entry: unknown, index: number): EnvelopeSignature {
  const where = `signature ${index + 1}`;
  if (!isJsonObject(entry)) throw malformed(`has ${where} that is not an object`);
  exactKeys(entry, ["keyid", "sig"], where);
  const { keyid, sig } = entry;
  if (typeof keyid !== "string" || keyid.length > MAX_KEYID_LENGTH) {
    throw malformed(`has ${where} without a string keyid of at most ${MAX_KEYID_LENGTH} chars`);
  }
  const bytes = typeof sig === "string" ? decodeBase64(sig) : undefined;
  if (bytes === undefined) {
    throw malformed(`has ${where} whose sig is not canonical standard base64 with padding`);
  }
  return { keyid, sig: bytes };
}

/**
 * Serialises an envelope to its file form (see {@link parseEnvelope}): keys in the order
 * payloadType, payload, signatures; 2-space indentation; trailing newline. Round-trips:
 * `parseEnvelope(serializeEnvelope(e))` equals `e` for any envelope `parseEnvelope` accepts.
 */
export function serializeEnvelope(envelope: Envelope): string {
  const doc = {
    payloadType: envelope.payloadType,
    payload: encodeBase64(envelope.payload),
    signatures: envelope.signatures.map((s) => ({ keyid: s.keyid, sig: encodeBase64(s.sig) })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * Checks an in-memory envelope has the shape {@link parseEnvelope} guarantees (for
 * envelopes built in code rather than parsed). Throws `malformed_envelope`.
 */
export function assertEnvelopeShape(envelope: Envelope): void {
  const e = envelope as unknown;
  if (!isJsonObject(e)) throw malformed("must be an object");
  if (typeof e.payloadType !== "string") throw malformed("needs a string payloadType");
  if (!(e.payload instanceof Uint8Array) || e.payload.length === 0) {
    throw malformed("needs a non-empty payload");
  }
  if (!Array.isArray(e.signatures)) throw malformed("needs a signatures array");
  if (e.signatures.length > MAX_SIGNATURES) {
    throw malformed(`has ${e.signatures.length} signatures; at most ${MAX_SIGNATURES} are allowed`);
  }
  e.signatures.forEach((s: unknown, i) => {
    if (!isJsonObject(s) || typeof s.keyid !== "string" || !(s.sig instanceof Uint8Array)) {
      throw malformed(`has signature ${i + 1} that is not {keyid: string, sig: bytes}`);
    }
  });
}

function exactKeys(doc: Record<string, unknown>, keys: readonly string[], where: string): void {
  const extra = Object.keys(doc).filter((k) => !keys.includes(k));
  const missing = keys.filter((k) => !Object.hasOwn(doc, k));
  if (missing.length > 0) throw malformed(`is missing ${missing.join(", ")} (in ${where})`);
  if (extra.length > 0) {
    throw malformed(
      `has unknown field(s) ${extra.map((k) => JSON.stringify(k)).join(", ")} (in ${where})`,
    );
  }
}

function malformed(problem: string): ReleaseError {
  return new ReleaseError("malformed_envelope", `the envelope ${problem}`);
}
