import { describe, expect, it } from "vitest";
import {
  createEnvelope,
  decodeBase64,
  MAX_ENVELOPE_BYTES,
  MAX_SIGNATURES,
  parseEnvelope,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
  serializeEnvelope,
  signEnvelope,
} from "../../../control/shared/release/index.js";
import { fixtureBytes, fixtureText, jsonBytes, KEY_A, KEY_B } from "./fixtures.js";

const malformed = expect.objectContaining({ name: "ReleaseError", reason: "malformed_envelope" });
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("preAuthEncoding", () => {
  it("matches the DSSE specification's example", () => {
    const pae = preAuthEncoding(
      "http://example.com/HelloWorld",
      new TextEncoder().encode("hello world"),
    );
    expect(text(pae)).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  });

  it("counts the payload type's length in UTF-8 bytes and keeps the payload bytes verbatim", () => {
    const pae = preAuthEncoding("é", new Uint8Array([0xff, 0x00]));
    expect([...pae]).toEqual([...new TextEncoder().encode("DSSEv1 2 é 2 "), 0xff, 0x00]);
  });

  it("encodes an empty payload", () => {
    expect(text(preAuthEncoding("t", new Uint8Array()))).toBe("DSSEv1 1 t 0 ");
  });
});

describe("parseEnvelope and serializeEnvelope", () => {
  const valid = JSON.parse(fixtureText("envelope-a.json")) as {
    payloadType: string;
    payload: string;
    signatures: { keyid: string; sig: string }[];
  };
  const withSig = (sig: Record<string, unknown>) => JSON.stringify({ ...valid, signatures: [sig] });
  const goodSig = valid.signatures[0]!;

  it("round-trips the fixture envelope byte for byte, from bytes or from text", () => {
    expect(serializeEnvelope(parseEnvelope(fixtureBytes("envelope-a.json")))).toBe(
      fixtureText("envelope-a.json"),
    );
    expect(serializeEnvelope(parseEnvelope(fixtureText("envelope-ab.json")))).toBe(
      fixtureText("envelope-ab.json"),
    );
  });

  it("round-trips an unsigned envelope so several key holders can sign in turn", async () => {
    const unsigned = parseEnvelope(
      serializeEnvelope(createEnvelope(fixtureBytes("manifest.json"))),
    );
    expect(unsigned.signatures).toEqual([]);
    expect(unsigned.payloadType).toBe(RELEASE_PAYLOAD_TYPE);
    const a = parseEnvelope(serializeEnvelope(await signEnvelope(unsigned, KEY_A.privateKey)));
    const ab = await signEnvelope(a, KEY_B.privateKey);
    expect(serializeEnvelope(ab)).toBe(fixtureText("envelope-ab.json"));
  });

  it.each([
    ["a payload in URL-safe base64 (bytes fb ff)", { ...valid, payload: "-_8=" }],
    ["a payload without padding", { ...valid, payload: valid.payload.replace(/=+$/, "") }],
    [
      "a payload with a line break",
      { ...valid, payload: `${valid.payload.slice(0, 40)}\n${valid.payload.slice(40)}` },
    ],
    ["a payload with non-zero trailing bits", { ...valid, payload: "QR==" }],
    ["a payload with an invalid character", { ...valid, payload: `*${valid.payload.slice(1)}` }],
    [
      "a signature without padding",
      { ...valid, signatures: [{ ...goodSig, sig: goodSig.sig.replace(/=+$/, "") }] },
    ],
    ["a signature in URL-safe base64", { ...valid, signatures: [{ ...goodSig, sig: "_-__" }] }],
  ])("refuses %s as malformed_envelope", (_name, doc) => {
    expect(() => parseEnvelope(JSON.stringify(doc))).toThrow(malformed);
  });

  it.each([
    ["payloadType", JSON.stringify({ payload: valid.payload, signatures: valid.signatures })],
    ["payload", JSON.stringify({ payloadType: valid.payloadType, signatures: valid.signatures })],
    ["signatures", JSON.stringify({ payloadType: valid.payloadType, payload: valid.payload })],
    ["keyid", withSig({ sig: goodSig.sig })],
    ["sig", withSig({ keyid: goodSig.keyid })],
  ])("refuses an envelope missing %s as malformed_envelope, naming it", (field, json) => {
    expect(() => parseEnvelope(json)).toThrow(malformed);
    expect(() => parseEnvelope(json)).toThrow(`is missing ${field}`);
  });

  it.each([
    ["an unknown top-level field", JSON.stringify({ ...valid, comment: "hi" })],
    ["an unknown signature field", withSig({ ...goodSig, cert: "x" })],
    ["a numeric payloadType", JSON.stringify({ ...valid, payloadType: 1 })],
    ["a numeric keyid", withSig({ ...goodSig, keyid: 1 })],
    ["a null sig", withSig({ ...goodSig, sig: null })],
    ["signatures given as an object", JSON.stringify({ ...valid, signatures: goodSig })],
    ["a signature given as a string", JSON.stringify({ ...valid, signatures: [goodSig.sig] })],
    ["an empty payload", JSON.stringify({ ...valid, payload: "" })],
    [
      "a repeated payload key",
      fixtureText("envelope-a.json").replace('"payload":', '"payload": "QQ==", "payload":'),
    ],
    ["a JSON array", "[]"],
    ["invalid JSON", "{"],
    [
      "too many signatures",
      JSON.stringify({ ...valid, signatures: Array(MAX_SIGNATURES + 1).fill(goodSig) }),
    ],
  ])("refuses %s as malformed_envelope", (_name, json) => {
    expect(() => parseEnvelope(json)).toThrow(malformed);
  });

  it("refuses invalid UTF-8 and oversized input as malformed_envelope", () => {
    expect(() => parseEnvelope(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]))).toThrow(malformed);
    expect(() => parseEnvelope(" ".repeat(MAX_ENVELOPE_BYTES + 1))).toThrow(malformed);
  });

  it("keeps a signature of the wrong length for verification to discount", () => {
    const envelope = parseEnvelope(withSig({ ...goodSig, sig: "AAAA" }));
    expect(envelope.signatures[0]!.sig).toHaveLength(3);
  });
});

describe("signEnvelope", () => {
  const unsigned = () => createEnvelope(fixtureBytes("manifest.json"));

  it("adds one signature and leaves its input unchanged", async () => {
    const input = unsigned();
    const signed = await signEnvelope(input, KEY_A.privateKey);
    expect(input.signatures).toEqual([]);
    expect(signed.signatures.map((s) => s.keyid)).toEqual([KEY_A.keyid]);
  });

  it("is idempotent per key: signing again with the same key replaces its signature", async () => {
    const once = await signEnvelope(unsigned(), KEY_A.privateKey);
    const twice = await signEnvelope(await signEnvelope(once, KEY_B.privateKey), KEY_A.privateKey);
    expect(twice.signatures.map((s) => s.keyid)).toEqual([KEY_A.keyid, KEY_B.keyid]);
    expect(twice.signatures[0]!.sig).toEqual(once.signatures[0]!.sig);
  });

  it("refuses to sign another payload type", async () => {
    const envelope = { ...unsigned(), payloadType: "application/json" };
    await expect(signEnvelope(envelope, KEY_A.privateKey)).rejects.toThrow(
      expect.objectContaining({ reason: "wrong_payload_type" }),
    );
  });

  it("refuses to sign an invalid manifest, with the manifest's reason", async () => {
    const envelope = createEnvelope(jsonBytes({ product: "server" }));
    await expect(signEnvelope(envelope, KEY_A.privateKey)).rejects.toThrow(
      expect.objectContaining({ reason: "wrong_product" }),
    );
  });

  it("refuses a private key of the wrong length as bad_key", async () => {
    await expect(signEnvelope(unsigned(), KEY_A.privateKey.subarray(1))).rejects.toThrow(
      expect.objectContaining({ reason: "bad_key" }),
    );
  });

  it("copies the manifest bytes into a new envelope", () => {
    const bytes = fixtureBytes("manifest.json");
    const envelope = createEnvelope(bytes);
    bytes[0] = 0;
    expect(envelope.payload[0]).toBe("{".charCodeAt(0));
  });
});

describe("strict base64", () => {
  it("accepts the standard spelling of bytes whose base64 uses + and /", () => {
    expect(decodeBase64("+/8=")).toEqual(new Uint8Array([0xfb, 0xff]));
    expect(decodeBase64("-_8=")).toBeUndefined();
  });
});
