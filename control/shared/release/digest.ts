import { createHash } from "node:crypto";

/** The SHA-256 digest of `bytes` as 64 lower-case hex characters. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The SHA-256 digest of `bytes`. */
export function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(bytes).digest());
}
