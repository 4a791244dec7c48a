/** Page tokens and sizes, validated the same way by every list RPC. */
import { ControlError } from "../errors.js";

/** Resolves a requested page size: default 100, at most 1000, never negative. */
export function pageSize(requested: number, fallback = 100, max = 1000): number {
  if (requested < 0) {
    throw new ControlError("invalid_argument", "page_size must not be negative", {
      field: "page_size",
    });
  }
  return requested === 0 ? fallback : Math.min(requested, max);
}

/** Encodes the key of the last row of a page as an opaque token. */
export function encodePageToken(key: string): string {
  return Buffer.from(JSON.stringify({ k: key }), "utf8").toString("base64url");
}

/** Decodes a page token; empty means the first page. */
export function decodePageToken(token: string): string | undefined {
  if (!token) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as { k?: unknown }).k === "string"
    ) {
      return (parsed as { k: string }).k;
    }
  } catch {
    // Fall through to the error below.
  }
  throw new ControlError("invalid_argument", "page_token is not one this server issued", {
    field: "page_token",
  });
}
