import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createEnvelope,
  KNOWN_PLATFORMS,
  parseEnvelope,
  parseManifest,
  ReleaseError,
  serializeEnvelope,
  signEnvelope,
  verifyEnvelope,
} from "../../control/shared/release/index.js";
import { ALL_PINS, fixtureText, KEY_A, NOW } from "../unit/release/fixtures.js";
import { FUZZ_TIMEOUT_MS, fuzzParams, fuzzRuns, hostileString } from "./arbitraries.js";

/** Runs `step`; anything thrown must be a ReleaseError with one of the closed reasons. */
async function onlyReleaseErrors(step: () => unknown): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (!(error instanceof ReleaseError)) {
      throw new Error(`threw ${String(error)} instead of a ReleaseError`, { cause: error });
    }
  }
}

const encoder = new TextEncoder();
const validEnvelope = fixtureText("envelope-ab.json");
const validManifest = Buffer.from(parseEnvelope(validEnvelope).payload).toString("utf8");

/** A text with random edits: replaced, deleted or inserted characters. */
function mutatedText(base: string): fc.Arbitrary<string> {
  const edit = fc.tuple(
    fc.nat(),
    fc.constantFrom("set", "delete", "insert"),
    fc.string({ maxLength: 4 }),
  );
  return fc.array(edit, { minLength: 1, maxLength: 8 }).map((edits) => {
    let text = base;
    for (const [at, how, piece] of edits) {
      const i = text.length > 0 ? at % text.length : 0;
      if (how === "set") text = text.slice(0, i) + piece + text.slice(i + 1);
      else if (how === "delete") text = text.slice(0, i) + text.slice(i + 1 + (at % 5));
      else text = text.slice(0, i) + piece + text.slice(i);
    }
    return text;
  });
}

const jsonish = fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString);
/** Manifests of the right shape with hostile values, or hostile values of the wrong shape. */
const manifestObject = fc.record(
  {
    product: fc.oneof(fc.constant("agent"), jsonish),
    version: fc.oneof(fc.constantFrom("1.2.3", "1.2.3-rc.1+b", "01.2.3", "v1.2.3"), jsonish),
    sequence: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 53), jsonish),
    expires: fc.oneof(
      fc.constantFrom("2030-01-01T00:00:00Z", "2030-02-30T00:00:00Z", "2030-01-01T23:59:60Z"),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      jsonish,
    ),
    artifacts: fc.oneof(
      fc.dictionary(
        fc.oneof(fc.constantFrom(...KNOWN_PLATFORMS, "__proto__"), fc.string()),
        fc.record(
          {
            sha256: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), jsonish),
            size: fc.oneof(fc.nat(), fc.double(), jsonish),
            url: fc.oneof(fc.webUrl(), jsonish),
            file: fc.oneof(fc.constantFrom("a/b.bin", "../x", "/abs", ""), jsonish),
          },
          { requiredKeys: [] },
        ),
        { maxKeys: 4 },
      ),
      jsonish,
    ),
    extra: jsonish,
  },
  { requiredKeys: [] },
);

describe("fuzz: the release envelope and manifest parsers refuse only with ReleaseError", () => {
  it(
    "parseEnvelope on random bytes, random text and mutated envelopes",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uint8Array({ maxLength: 600 }),
            fc.string({ unit: "binary", maxLength: 600 }),
            mutatedText(validEnvelope),
            fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? "null"),
          ),
          (input) => onlyReleaseErrors(() => parseEnvelope(input)),
        ),
        fuzzParams(fuzzRuns(1000)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "parseManifest on random bytes, mutated manifests and hostile manifest objects",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.uint8Array({ maxLength: 600 }),
            mutatedText(validManifest).map((t) => encoder.encode(t)),
            manifestObject.map((m) => encoder.encode(JSON.stringify(m))),
          ),
          (input) => onlyReleaseErrors(() => parseManifest(input)),
        ),
        fuzzParams(fuzzRuns(1000)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "verifyEnvelope on mutated envelopes and on signed hostile manifests",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            mutatedText(validEnvelope).map((text) => ({ text, sign: false })),
            manifestObject.map((m) => ({ text: JSON.stringify(m), sign: true })),
          ),
          fc.oneof(
            fc.constant(ALL_PINS as readonly string[]),
            fc.array(hostileString, { maxLength: 3 }),
          ),
          fc.oneof(fc.constant(1), fc.integer()),
          async ({ text, sign }, pins, threshold) =>
            onlyReleaseErrors(async () => {
              const envelope = sign
                ? await signEnvelope(createEnvelope(encoder.encode(text)), KEY_A.privateKey)
                : parseEnvelope(text);
              await verifyEnvelope(envelope, { pins, threshold, now: NOW });
              serializeEnvelope(envelope);
            }),
        ),
        fuzzParams(fuzzRuns(300, 0.3)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it("a signed manifest of the right shape still verifies (the fuzz reaches the end)", async () => {
    const envelope = await signEnvelope(
      createEnvelope(encoder.encode(validManifest)),
      KEY_A.privateKey,
    );
    const verified = await verifyEnvelope(envelope, { pins: ALL_PINS, threshold: 1, now: NOW });
    expect(verified.manifest.product).toBe("agent");
  });
});
