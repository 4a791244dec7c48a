import { describe, expect, it } from "vitest";
import {
  createEnvelope,
  formatPin,
  generateKeyPair,
  keyIdOf,
  parsePin,
  parsePrivateKey,
  publicKeyOf,
  serializePrivateKey,
  signEnvelope,
  verifyEnvelope,
} from "../../../control/shared/release/index.js";
import { fixtureBytes, fixtureText, KEY_A, NOW } from "./fixtures.js";

const badKey = expect.objectContaining({ name: "ReleaseError", reason: "bad_key" });

describe("pins", () => {
  it("writes the RFC 8032 TEST 1 public key as the documented pin", () => {
    expect(formatPin(KEY_A.publicKey)).toBe("ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
    expect(KEY_A.pin).toBe(formatPin(KEY_A.publicKey));
  });

  it("parses a pin back to its 32-byte key", () => {
    expect(parsePin(KEY_A.pin)).toEqual(KEY_A.publicKey);
  });

  const identity = new Uint8Array(32);
  identity[0] = 1;
  const yEqualsP = Buffer.from(`ed${"ff".repeat(30)}7f`, "hex");

  it.each([
    ["a missing prefix", "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
    ["another algorithm", "ed448:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
    ["the seed's sha256/ SPKI style", "sha256/11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
    ["a hex key", `ed25519:${KEY_A.publicKeyHex}`],
    ["padding", `${KEY_A.pin}=`],
    ["standard base64 characters", "ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
    ["non-zero trailing bits", "ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURp"],
    ["a 31-byte key", `ed25519:${Buffer.from(KEY_A.publicKey.subarray(1)).toString("base64url")}`],
    ["a 33-byte key", `ed25519:${Buffer.from([...KEY_A.publicKey, 0]).toString("base64url")}`],
    ["a non-canonical point encoding", `ed25519:${yEqualsP.toString("base64url")}`],
    ["the small-order identity point", `ed25519:${Buffer.from(identity).toString("base64url")}`],
    ["an empty string", ""],
  ])("refuses a pin with %s as bad_key", (_name, pin) => {
    expect(() => parsePin(pin)).toThrow(badKey);
  });

  it("refuses to format a key of the wrong length", () => {
    expect(() => formatPin(KEY_A.publicKey.subarray(1))).toThrow(badKey);
  });
});

describe("key ids", () => {
  it("are the first 16 hex characters of sha256 of the public key", () => {
    expect(keyIdOf(KEY_A.publicKey)).toBe("21fe31dfa154a261");
    expect(keyIdOf(KEY_A.publicKey)).toBe(KEY_A.keyid);
  });

  it("refuse a key of the wrong length", () => {
    expect(() => keyIdOf(new Uint8Array(31))).toThrow(badKey);
  });
});

describe("private key file", () => {
  it("reads the fixture key file as the fixture seed", () => {
    expect(parsePrivateKey(fixtureText("key-a.json"))).toEqual(KEY_A.privateKey);
    expect(serializePrivateKey(KEY_A.privateKey)).toBe(fixtureText("key-a.json"));
  });

  const valid = JSON.parse(fixtureText("key-a.json")) as Record<string, unknown>;
  it.each([
    ["not JSON", "ed25519 key"],
    ["a wrong kind", JSON.stringify({ ...valid, kind: "ssh" })],
    ["a wrong alg", JSON.stringify({ ...valid, alg: "ed448" })],
    ["an extra field", JSON.stringify({ ...valid, comment: "x" })],
    ["a missing key", JSON.stringify({ kind: valid.kind, alg: valid.alg })],
    ["a 31-byte key", JSON.stringify({ ...valid, key: Buffer.alloc(31).toString("base64") })],
    ["a 64-byte key", JSON.stringify({ ...valid, key: Buffer.alloc(64).toString("base64") })],
    ["unpadded base64", JSON.stringify({ ...valid, key: String(valid.key).replace("=", "") })],
  ])("refuses a key file with %s as bad_key, without echoing key material", (_name, text) => {
    let message = "";
    try {
      parsePrivateKey(text);
    } catch (error) {
      expect(error).toEqual(badKey);
      message = (error as Error).message;
    }
    expect(message).not.toBe("");
    expect(message).not.toContain(String(valid.key).slice(0, 12));
  });

  it("refuses to write a key of the wrong length", () => {
    expect(() => serializePrivateKey(new Uint8Array(31))).toThrow(badKey);
  });
});

describe("generateKeyPair", () => {
  it("makes distinct keys whose pin and key id match, and whose signatures verify", async () => {
    const one = await generateKeyPair();
    const two = await generateKeyPair();
    expect(one.privateKey).not.toEqual(two.privateKey);
    expect(one.privateKey).toHaveLength(32);
    expect(parsePin(one.pin)).toEqual(one.publicKey);
    expect(one.keyid).toBe(keyIdOf(one.publicKey));
    expect(await publicKeyOf(one.privateKey)).toEqual(one.publicKey);
    const fromFile = parsePrivateKey(serializePrivateKey(one.privateKey));
    const signed = await signEnvelope(createEnvelope(fixtureBytes("manifest.json")), fromFile);
    const release = await verifyEnvelope(signed, { pins: [one.pin], threshold: 1, now: NOW });
    expect(release.signerKeyIds).toEqual([one.keyid]);
  });
});
