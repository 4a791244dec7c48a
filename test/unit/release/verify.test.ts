import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  createEnvelope,
  type Envelope,
  parseEnvelope,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
  type ReleaseError,
  type ReleaseRefusal,
  serializeEnvelope,
  signEnvelope,
  type VerifyOptions,
  verifyEnvelope,
  verifyStrict,
} from "../../../control/shared/release/index.js";
import {
  ALL_PINS,
  fixtureBytes,
  fixtureText,
  jsonBytes,
  KEY_A,
  KEY_B,
  KEY_C,
  NOW,
  signRaw,
} from "./fixtures.js";

const ONE_OF_A: VerifyOptions = { pins: [KEY_A.pin], threshold: 1, now: NOW };
const TWO_OF_THREE: VerifyOptions = { pins: ALL_PINS, threshold: 2, now: NOW };

/** The ed25519 group order L. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

async function refusal(
  envelope: Envelope,
  options: VerifyOptions,
): Promise<{ reason: ReleaseRefusal; message: string }> {
  const error = (await verifyEnvelope(envelope, options).then(
    () => expect.unreachable("the envelope verified"),
    (e: unknown) => e,
  )) as ReleaseError;
  expect(error.name).toBe("ReleaseError");
  return { reason: error.reason, message: error.message };
}

const envelopeA = () => parseEnvelope(fixtureBytes("envelope-a.json"));
const envelopeAB = () => parseEnvelope(fixtureBytes("envelope-ab.json"));

describe("golden vectors", () => {
  it("the fixture envelope verifies against the pin of its signer", async () => {
    const release = await verifyEnvelope(envelopeA(), ONE_OF_A);
    expect(release.manifest.version).toBe("1.4.0");
    expect(release.manifest.sequence).toBe(7);
    expect(release.signerKeyIds).toEqual([KEY_A.keyid]);
    expect(release.payload).toEqual(fixtureBytes("manifest.json"));
    expect(release.expiresAt.toISOString()).toBe("2030-01-01T00:00:00.000Z");
  });

  it("signing the fixture manifest with the fixture keys reproduces the fixture envelopes byte for byte", async () => {
    const a = await signEnvelope(createEnvelope(fixtureBytes("manifest.json")), KEY_A.privateKey);
    expect(serializeEnvelope(a)).toBe(fixtureText("envelope-a.json"));
    const ab = await signEnvelope(a, KEY_B.privateKey);
    expect(serializeEnvelope(ab)).toBe(fixtureText("envelope-ab.json"));
  });

  it("the fixture signature verifies with node:crypto over the DSSE pre-authentication encoding", () => {
    const envelope = envelopeA();
    const key = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(KEY_A.publicKey).toString("base64url") },
      format: "jwk",
    });
    const pae = preAuthEncoding(envelope.payloadType, envelope.payload);
    expect(nodeVerify(null, pae, key, envelope.signatures[0]!.sig)).toBe(true);
    expect(nodeVerify(null, envelope.payload, key, envelope.signatures[0]!.sig)).toBe(false);
  });

  it("refuses the fixture envelope when its only signer is not pinned", async () => {
    const { reason, message } = await refusal(envelopeA(), { ...ONE_OF_A, pins: [KEY_B.pin] });
    expect(reason).toBe("insufficient_signatures");
    expect(message).toContain(
      "1 valid signature(s) from distinct pinned keys are required, found 0",
    );
  });
});

describe("signatures cover the exact payload bytes and type", () => {
  it("refuses the fixture envelope with one payload byte flipped", async () => {
    const envelope = envelopeA();
    envelope.payload[10]! ^= 0x01;
    expect((await refusal(envelope, ONE_OF_A)).reason).toBe("insufficient_signatures");
  });

  it("refuses the fixture envelope with a changed payload type", async () => {
    const envelope = {
      ...envelopeA(),
      payloadType: "application/vnd.agentcontrol.release.v2+json",
    };
    const { reason, message } = await refusal(envelope, ONE_OF_A);
    expect(reason).toBe("wrong_payload_type");
    expect(message).toContain("v2+json");
  });

  it("refuses a signature made over the same payload under another payload type", async () => {
    const other = await signRaw(fixtureBytes("manifest.json"), [KEY_A], "application/json");
    const envelope = { ...other, payloadType: RELEASE_PAYLOAD_TYPE };
    expect((await refusal(envelope, ONE_OF_A)).reason).toBe("insufficient_signatures");
  });

  it("refuses a re-encoded JSON payload with the same meaning but different bytes", async () => {
    const envelope = envelopeA();
    const reencoded = jsonBytes(JSON.parse(new TextDecoder().decode(envelope.payload)));
    expect(reencoded).not.toEqual(envelope.payload);
    const { reason } = await refusal({ ...envelope, payload: reencoded }, ONE_OF_A);
    expect(reason).toBe("insufficient_signatures");
  });

  it("accepts a validly signed manifest in non-canonical formatting, since the exact bytes are signed", async () => {
    const compact = jsonBytes(JSON.parse(fixtureText("manifest.json")));
    const release = await verifyEnvelope(await signRaw(compact, [KEY_A]), ONE_OF_A);
    expect(release.payload).toEqual(compact);
  });
});

describe("threshold counts distinct pinned keys", () => {
  it("passes 2 of 3 pins with signatures from two distinct keys", async () => {
    const release = await verifyEnvelope(envelopeAB(), TWO_OF_THREE);
    expect(release.signerKeyIds).toEqual([KEY_A.keyid, KEY_B.keyid]);
  });

  it("refuses 2 of 3 pins when one valid signature is repeated twice", async () => {
    const envelope = envelopeA();
    envelope.signatures.push({ ...envelope.signatures[0]! });
    const { reason, message } = await refusal(envelope, TWO_OF_THREE);
    expect(reason).toBe("insufficient_signatures");
    expect(message).toContain(
      "2 valid signature(s) from distinct pinned keys are required, found 1",
    );
    expect(message).toContain("1 repeating an already counted key");
  });

  it("refuses a repeated signature even when the copy claims another pinned key's id", async () => {
    const envelope = envelopeA();
    envelope.signatures.push({ keyid: KEY_B.keyid, sig: envelope.signatures[0]!.sig });
    expect((await refusal(envelope, TWO_OF_THREE)).reason).toBe("insufficient_signatures");
  });

  it("counts a key pinned twice only once", async () => {
    const options = { pins: [KEY_A.pin, KEY_A.pin], threshold: 2, now: NOW };
    const { reason, message } = await refusal(envelopeAB(), options);
    expect(reason).toBe("bad_threshold");
    expect(message).toContain("exceeds the 1 distinct pinned key(s)");
  });

  it("finds the signer whatever the keyid hint says", async () => {
    const envelope = envelopeAB();
    envelope.signatures[0]!.keyid = KEY_C.keyid;
    envelope.signatures[1]!.keyid = "";
    const release = await verifyEnvelope(envelope, TWO_OF_THREE);
    expect(release.signerKeyIds).toEqual([KEY_A.keyid, KEY_B.keyid]);
  });

  it("ignores signatures from unpinned keys when enough pinned keys signed", async () => {
    const envelope = await signRaw(fixtureBytes("manifest.json"), [KEY_C, KEY_A]);
    const release = await verifyEnvelope(envelope, ONE_OF_A);
    expect(release.signerKeyIds).toEqual([KEY_A.keyid]);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses threshold %s as bad_threshold", async (threshold) => {
    const { reason } = await refusal(envelopeA(), { ...ONE_OF_A, threshold });
    expect(reason).toBe("bad_threshold");
  });

  it("refuses a threshold above the number of pins as bad_threshold", async () => {
    const { reason } = await refusal(envelopeA(), { ...TWO_OF_THREE, threshold: 4 });
    expect(reason).toBe("bad_threshold");
  });

  it("refuses a malformed pin as bad_key naming its position", async () => {
    const options = { ...ONE_OF_A, pins: [KEY_A.pin, "ed25519:AAAA"] };
    const { reason, message } = await refusal(envelopeA(), options);
    expect(reason).toBe("bad_key");
    expect(message).toMatch(/^pinned key 2: /);
  });
});

describe("strict ed25519", () => {
  it("refuses a signature whose S is replaced by the non-canonical S + L", async () => {
    const envelope = envelopeA();
    const sig = envelope.signatures[0]!.sig;
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString("hex")}`);
    const sPlusL = Buffer.from((s + L).toString(16).padStart(64, "0"), "hex").reverse();
    const forged = new Uint8Array([...sig.subarray(0, 32), ...sPlusL]);
    expect(forged).toHaveLength(64);
    const pae = preAuthEncoding(envelope.payloadType, envelope.payload);
    expect(await verifyStrict(sig, pae, KEY_A.publicKey)).toBe(true);
    expect(await verifyStrict(forged, pae, KEY_A.publicKey)).toBe(false);
    envelope.signatures[0]!.sig = forged;
    expect((await refusal(envelope, ONE_OF_A)).reason).toBe("insufficient_signatures");
  });

  it.each([63, 65, 0])("never counts a signature of %i bytes", async (length) => {
    const envelope = envelopeA();
    const sig = envelope.signatures[0]!.sig;
    envelope.signatures[0]!.sig = length <= 64 ? sig.slice(0, length) : new Uint8Array([...sig, 0]);
    const { reason, message } = await refusal(envelope, ONE_OF_A);
    expect(reason).toBe("insufficient_signatures");
    expect(message).toContain("1 not 64 bytes long");
  });

  it("never verifies with a public key of the wrong length", async () => {
    const envelope = envelopeA();
    const pae = preAuthEncoding(envelope.payloadType, envelope.payload);
    const sig = envelope.signatures[0]!.sig;
    expect(await verifyStrict(sig, pae, KEY_A.publicKey.slice(0, 31))).toBe(false);
    expect(await verifyStrict(sig, pae, new Uint8Array([...KEY_A.publicKey, 0]))).toBe(false);
  });

  it("never verifies the trivial forgery against the small-order identity key", async () => {
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const forgery = new Uint8Array(64);
    forgery[0] = 1; // R = identity, S = 0: valid under cofactored, non-strict rules
    expect(await verifyStrict(forgery, new TextEncoder().encode("any"), identity)).toBe(false);
  });
});

describe("manifest and expiry after the signatures", () => {
  it("refuses an expired release at exactly its expiry time, naming the release", async () => {
    const now = new Date("2030-01-01T00:00:00Z");
    const { reason, message } = await refusal(envelopeA(), { ...ONE_OF_A, now });
    expect(reason).toBe("expired");
    expect(message).toContain("release 1.4.0 (sequence 7) expired at 2030-01-01T00:00:00Z");
  });

  it("accepts the release one millisecond before it expires", async () => {
    const now = new Date(Date.parse("2030-01-01T00:00:00Z") - 1);
    await expect(verifyEnvelope(envelopeA(), { ...ONE_OF_A, now })).resolves.toBeDefined();
  });

  it("reports an unsigned manifest of the wrong product as insufficient_signatures, not wrong_product", async () => {
    const forged = await signRaw(jsonBytes({ product: "server" }), []);
    expect((await refusal(forged, ONE_OF_A)).reason).toBe("insufficient_signatures");
    const unsignedJunk = createEnvelope(new TextEncoder().encode("not json"));
    expect((await refusal(unsignedJunk, ONE_OF_A)).reason).toBe("insufficient_signatures");
  });

  it("refuses an invalid Date as now with a TypeError", async () => {
    await expect(
      verifyEnvelope(envelopeA(), { ...ONE_OF_A, now: new Date(Number.NaN) }),
    ).rejects.toThrow(TypeError);
  });

  it("refuses an in-memory envelope of the wrong shape as malformed_envelope", async () => {
    const broken = { ...envelopeA(), payload: "text" } as unknown as Envelope;
    expect((await refusal(broken, ONE_OF_A)).reason).toBe("malformed_envelope");
  });
});
