/**
 * Release keys as TUF keys: the same ed25519 key files and pins `agentctl release keygen`
 * makes, written into TUF metadata as `ed25519` keys (hex public value) and used to sign
 * its canonical bytes. The key id is the hex SHA-256 of the 32-byte public key.
 */
import { createPrivateKey, sign } from "node:crypto";
import { Key, Signature } from "@tufjs/models";
import { sha256Hex } from "../release/digest.js";
import { assertPrivateKey, parsePin, publicKeyOf } from "../release/keys.js";

/** PKCS#8 DER prefix of an ed25519 private key (RFC 8410), followed by the 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The TUF key of an ed25519 public key (from a pin or raw bytes). */
export function tufKey(publicKey: Uint8Array | string): Key {
  const bytes = typeof publicKey === "string" ? parsePin(publicKey) : publicKey;
  return new Key({
    keyID: sha256Hex(bytes),
    keyType: "ed25519",
    scheme: "ed25519",
    keyVal: { public: Buffer.from(bytes).toString("hex") },
  });
}

/** A signer for `Metadata.sign`, from a release key's 32-byte seed; with its key. */
export async function tufSigner(
  privateKey: Uint8Array,
): Promise<{ key: Key; sign: (data: Buffer) => Signature }> {
  assertPrivateKey(privateKey);
  const key = tufKey(await publicKeyOf(privateKey));
  const secret = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(privateKey)]),
    format: "der",
    type: "pkcs8",
  });
  return {
    key,
    sign: (data) =>
      new Signature({ keyID: key.keyID, sig: sign(null, data, secret).toString("hex") }),
  };
}
