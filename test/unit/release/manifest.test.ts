import { describe, expect, it } from "vitest";
import {
  buildManifest,
  KNOWN_PLATFORMS,
  type ManifestArtifact,
  parseManifest,
  type ReleaseRefusal,
  verifyEnvelope,
} from "../../../control/shared/release/index.js";
import { fixtureBytes, fixtureManifestValue, jsonBytes, KEY_A, NOW, signRaw } from "./fixtures.js";

const SHA = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef";
const AMD64: ManifestArtifact = {
  url: "https://dl.example.com/agent/linux-amd64",
  sha256: SHA,
  size: 10,
};

type Change = (manifest: Record<string, unknown>) => void;
const set =
  (key: string, value: unknown): Change =>
  (m) => {
    m[key] = value;
  };
const setArtifact =
  (fields: Record<string, unknown>, remove: string[] = []): Change =>
  (m) => {
    const artifact = { ...AMD64, ...fields } as Record<string, unknown>;
    for (const key of remove) delete artifact[key];
    m.artifacts = { "linux-amd64": artifact };
  };

const refusals: [string, Change, ReleaseRefusal][] = [
  ["a product other than agent", set("product", "server"), "wrong_product"],
  ["a missing product", (m) => delete m.product, "wrong_product"],
  ["a version without patch number", set("version", "1.4"), "bad_version"],
  ["a version with a leading v", set("version", "v1.4.0"), "bad_version"],
  ["a version with a leading zero", set("version", "01.4.0"), "bad_version"],
  ["a numeric version", set("version", 1), "bad_version"],
  ["a sequence of zero", set("sequence", 0), "bad_sequence"],
  ["a negative sequence", set("sequence", -3), "bad_sequence"],
  ["a non-integer sequence", set("sequence", 1.5), "bad_sequence"],
  ["a sequence given as a string", set("sequence", "7"), "bad_sequence"],
  ["a sequence above the safe integers", set("sequence", 2 ** 53), "bad_sequence"],
  ["a date without time as expires", set("expires", "2030-01-01"), "bad_expires"],
  ["an impossible date as expires", set("expires", "2030-02-30T00:00:00Z"), "bad_expires"],
  ["a space-separated expires", set("expires", "2030-01-01 00:00:00Z"), "bad_expires"],
  ["an expires without offset", set("expires", "2030-01-01T00:00:00"), "bad_expires"],
  ["a numeric expires", set("expires", 1893456000), "bad_expires"],
  ["an unknown platform", set("artifacts", { "linux-amd65": AMD64 }), "unknown_platform"],
  ["a platform in the wrong case", set("artifacts", { "Linux-amd64": AMD64 }), "unknown_platform"],
  ["no artifacts at all", set("artifacts", {}), "bad_artifact"],
  ["artifacts given as a list", set("artifacts", [AMD64]), "malformed_manifest"],
  ["an upper-case sha256", setArtifact({ sha256: SHA.toUpperCase() }), "bad_artifact"],
  ["a 63-character sha256", setArtifact({ sha256: SHA.slice(1) }), "bad_artifact"],
  ["a missing sha256", setArtifact({}, ["sha256"]), "bad_artifact"],
  ["a size of zero", setArtifact({ size: 0 }), "bad_artifact"],
  ["a negative size", setArtifact({ size: -1 }), "bad_artifact"],
  ["a fractional size", setArtifact({ size: 1.5 }), "bad_artifact"],
  ["a size given as a string", setArtifact({ size: "10" }), "bad_artifact"],
  ["both url and file", setArtifact({ file: "agent" }), "bad_artifact"],
  ["neither url nor file", setArtifact({}, ["url"]), "bad_artifact"],
  ["an ftp url", setArtifact({ url: "ftp://dl.example.com/agent" }), "bad_artifact"],
  ["a relative url", setArtifact({ url: "/agent/linux-amd64" }), "bad_artifact"],
  ["a url with credentials", setArtifact({ url: "https://u:p@dl.example.com/a" }), "bad_artifact"],
  ["a url with a space", setArtifact({ url: "https://dl.example.com/a b" }), "bad_artifact"],
  ["a file escaping its folder", setArtifact({ file: "../agent" }, ["url"]), "bad_artifact"],
  ["an absolute file path", setArtifact({ file: "/usr/bin/agent" }, ["url"]), "bad_artifact"],
  ["a file with a backslash", setArtifact({ file: "bin\\agent" }, ["url"]), "bad_artifact"],
  ["an unknown artifact field", setArtifact({ mode: "0755" }), "bad_artifact"],
  ["an unknown top-level field", set("channel", "stable"), "malformed_manifest"],
];

describe("parseManifest", () => {
  it("parses the fixture manifest", () => {
    const manifest = parseManifest(fixtureBytes("manifest.json"));
    expect(manifest).toEqual({
      product: "agent",
      version: "1.4.0",
      sequence: 7,
      expires: "2030-01-01T00:00:00Z",
      artifacts: {
        "linux-amd64": {
          url: "https://downloads.example.com/agent/1.4.0/linux-amd64",
          sha256: SHA,
          size: 18874368,
        },
        "linux-arm64": {
          file: "agent-1.4.0-linux-arm64",
          sha256: "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c",
          size: 17825792,
        },
      },
    });
  });

  it.each(refusals)("refuses %s with %s", (_name, change, reason) => {
    const manifest = fixtureManifestValue();
    change(manifest);
    expect(() => parseManifest(jsonBytes(manifest))).toThrow(
      expect.objectContaining({ name: "ReleaseError", reason }),
    );
  });

  it.each(refusals)(
    "verifyEnvelope refuses a validly signed manifest with %s with %s",
    async (_name, change, reason) => {
      const manifest = fixtureManifestValue();
      change(manifest);
      const envelope = await signRaw(jsonBytes(manifest), [KEY_A]);
      await expect(
        verifyEnvelope(envelope, { pins: [KEY_A.pin], threshold: 1, now: NOW }),
      ).rejects.toThrow(expect.objectContaining({ reason }));
    },
  );

  it.each([
    ["invalid JSON", new TextEncoder().encode("{")],
    ["a JSON array", jsonBytes([1])],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0x7d])],
    ["a byte-order mark", new Uint8Array([0xef, 0xbb, 0xbf, ...fixtureBytes("manifest.json")])],
    [
      "a repeated key",
      new TextEncoder().encode(
        new TextDecoder()
          .decode(fixtureBytes("manifest.json"))
          .replace('"sequence": 7,', '"sequence": 7, "sequence": 8,'),
      ),
    ],
    [
      "a key repeated under a JSON escape",
      new TextEncoder().encode(
        new TextDecoder()
          .decode(fixtureBytes("manifest.json"))
          .replace('"sequence": 7,', '"sequence": 7, "\\u0073equence": 8,'),
      ),
    ],
  ])("refuses %s as malformed_manifest", (_name, bytes) => {
    expect(() => parseManifest(bytes)).toThrow(
      expect.objectContaining({ reason: "malformed_manifest" }),
    );
  });

  it("says which field is wrong and what it found", () => {
    const manifest = fixtureManifestValue();
    manifest.sequence = 0;
    expect(() => parseManifest(jsonBytes(manifest))).toThrow(
      "the manifest's sequence must be a positive safe integer, found 0",
    );
  });

  it.each([
    ["a pre-release version with build metadata", set("version", "2.0.0-rc.1+build.5")],
    ["an expires with offset and fraction", set("expires", "2030-01-01T02:00:00.123456+02:00")],
    [
      "every known platform",
      set("artifacts", Object.fromEntries(KNOWN_PLATFORMS.map((p) => [p, AMD64]))),
    ],
    ["a file in a sub-folder", setArtifact({ file: "bin/agent-1.4.0" }, ["url"])],
    ["an http url", setArtifact({ url: "http://127.0.0.1:8080/agent" })],
  ])("accepts %s", (_name, change) => {
    const manifest = fixtureManifestValue();
    change(manifest);
    expect(() => parseManifest(jsonBytes(manifest))).not.toThrow();
  });
});

describe("buildManifest", () => {
  const input = {
    version: "1.4.0",
    sequence: 7,
    expires: new Date("2030-01-01T00:00:00Z"),
    artifacts: fixtureManifestValue().artifacts as Record<string, ManifestArtifact>,
  };

  it("writes the canonical bytes of the fixture manifest", () => {
    expect(buildManifest(input)).toEqual(fixtureBytes("manifest.json"));
  });

  it("gives the same bytes whatever the key order of its input", () => {
    const reordered = Object.fromEntries(Object.entries(input.artifacts).reverse());
    expect(buildManifest({ ...input, artifacts: reordered })).toEqual(buildManifest(input));
  });

  it("keeps milliseconds of expires only when they are not zero", () => {
    const bytes = buildManifest({ ...input, expires: new Date("2030-01-01T00:00:00.250Z") });
    expect(parseManifest(bytes).expires).toBe("2030-01-01T00:00:00.250Z");
  });

  it("refuses an invalid Date as bad_expires", () => {
    expect(() => buildManifest({ ...input, expires: new Date(Number.NaN) })).toThrow(
      expect.objectContaining({ reason: "bad_expires" }),
    );
  });

  it("refuses what parseManifest would refuse, with the same reason", () => {
    expect(() => buildManifest({ ...input, sequence: 0 })).toThrow(
      expect.objectContaining({ reason: "bad_sequence" }),
    );
    expect(() => buildManifest({ ...input, artifacts: { "linux-sparc": AMD64 } })).toThrow(
      expect.objectContaining({ reason: "unknown_platform" }),
    );
  });
});
