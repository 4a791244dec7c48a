/**
 * Strict base64 codecs. Decoding accepts exactly one spelling per byte string: the
 * canonical one (right alphabet, right padding, zero trailing bits), so two different
 * texts never decode to the same bytes.
 */

const STANDARD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_SAFE_UNPADDED = /^[A-Za-z0-9_-]*$/;

/** Encodes bytes as standard base64 (RFC 4648 §4) with padding. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Decodes canonical standard base64 with padding, or returns `undefined` for anything
 * else (URL-safe alphabet, missing padding, whitespace, non-zero trailing bits).
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!STANDARD.test(text)) return undefined;
  const bytes = new Uint8Array(Buffer.from(text, "base64"));
  return encodeBase64(bytes) === text ? bytes : undefined;
}

/** Encodes bytes as base64url (RFC 4648 §5) without padding. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/** Decodes canonical unpadded base64url, or returns `undefined` for anything else. */
export function decodeBase64Url(text: string): Uint8Array | undefined {
  if (!URL_SAFE_UNPADDED.test(text) || text.length % 4 === 1) return undefined;
  const bytes = new Uint8Array(Buffer.from(text, "base64url"));
  return encodeBase64Url(bytes) === text ? bytes : undefined;
}
