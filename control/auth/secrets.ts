/**
 * Credentials as text, and how they are stored and compared.
 *
 * A credential is `<kind>.<id>.<secret>`: the id finds the stored row, the secret is
 * checked against its stored SHA-256 in constant time. Secrets are 32 random bytes, so a
 * plain SHA-256 is the right hash (no password stretching is needed for random keys), and
 * only hashes reach the database.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Kinds of credential Control issues. */
export type CredentialKind = "ajt" | "ant";

/** A credential split into its parts. */
export interface ParsedCredential {
  readonly kind: CredentialKind;
  readonly id: string;
  readonly secret: string;
}

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256OfText(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** A fresh random secret, 32 bytes as base64url. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Compares two hex digests in constant time (false when lengths differ). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** True when `secret` hashes to `storedHash`, compared in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  return digestsEqual(sha256OfText(secret), storedHash);
}

/** Builds `<kind>.<id>.<secret>`; a node id is base64url-encoded so any id is safe. */
export function formatCredential(kind: CredentialKind, id: string, secret: string): string {
  const encodedId = kind === "ant" ? Buffer.from(id, "utf8").toString("base64url") : id;
  return `${kind}.${encodedId}.${secret}`;
}

/** Splits a credential; undefined when it is not one Control issued. */
export function parseCredential(text: string): ParsedCredential | undefined {
  const parts = text.split(".");
  if (parts.length !== 3) return undefined;
  const [kind, rawId, secret] = parts as [string, string, string];
  if ((kind !== "ajt" && kind !== "ant") || !rawId || !secret || secret.length > 128) {
    return undefined;
  }
  if (!/^[A-Za-z0-9_-]+$/.test(rawId) || !/^[A-Za-z0-9_-]+$/.test(secret)) return undefined;
  const id = kind === "ant" ? Buffer.from(rawId, "base64url").toString("utf8") : rawId;
  return { kind, id, secret };
}

/** Reads `Bearer <token>` from an authorization header value. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
