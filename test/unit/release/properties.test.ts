import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeBase64,
  decodeBase64Url,
  type Envelope,
  encodeBase64,
  encodeBase64Url,
  parseEnvelope,
  ReleaseError,
  serializeEnvelope,
  verifyEnvelope,
} from "../../../control/shared/release/index.js";
import { ALL_PINS, fixtureBytes, NOW } from "./fixtures.js";

const fixture = () => parseEnvelope(fixtureBytes("envelope-ab.json"));
const options = { pins: ALL_PINS, threshold: 2, now: NOW };

async function reasonOf(envelope: Envelope): Promise<string> {
  try {
    await verifyEnvelope(envelope, options);
    return "verified";
  } catch (error) {
    return error instanceof ReleaseError ? error.reason : `unexpected ${String(error)}`;
  }
}

describe("properties", () => {
  it("the unmodified 2-of-3 fixture verifies (baseline for the mutations below)", async () => {
    expect(await reasonOf(fixture())).toBe("verified");
  });

  it("a random single-byte change to the payload never verifies", async () => {
    const size = fixture().payload.length;
    await fc.assert(
      fc.asyncProperty(fc.nat(size - 1), fc.integer({ min: 1, max: 255 }), async (index, xor) => {
        const envelope = fixture();
        envelope.payload[index]! ^= xor;
        expect(await reasonOf(envelope)).toBe("insufficient_signatures");
      }),
      { numRuns: 150 },
    );
  });

  it("a random single-byte change to either signature never verifies", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(1),
        fc.nat(63),
        fc.integer({ min: 1, max: 255 }),
        async (which, index, xor) => {
          const envelope = fixture();
          envelope.signatures[which]!.sig[index]! ^= xor;
          expect(await reasonOf(envelope)).toBe("insufficient_signatures");
        },
      ),
      { numRuns: 150 },
    );
  });

  it("any envelope survives serialise then parse unchanged", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.array(
          fc.record({ keyid: fc.string({ maxLength: 40 }), sig: fc.uint8Array({ maxLength: 80 }) }),
          {
            maxLength: 4,
          },
        ),
        (payloadType, payload, signatures) => {
          const envelope = { payloadType, payload, signatures };
          expect(parseEnvelope(serializeEnvelope(envelope))).toEqual(envelope);
        },
      ),
    );
  });

  it("each byte string has exactly one accepted base64 and base64url spelling", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.string({ maxLength: 12 }), (bytes, text) => {
        expect(decodeBase64(encodeBase64(bytes))).toEqual(bytes);
        expect(decodeBase64Url(encodeBase64Url(bytes))).toEqual(bytes);
        const decoded = decodeBase64(text);
        if (decoded !== undefined) expect(encodeBase64(decoded)).toBe(text);
        const decodedUrl = decodeBase64Url(text);
        if (decodedUrl !== undefined) expect(encodeBase64Url(decodedUrl)).toBe(text);
      }),
    );
  });
});
