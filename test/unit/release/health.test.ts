/**
 * A manifest's `health`: parsed strictly with defaults, refused with the field that is wrong,
 * carried in the signed bytes, and absent from them when a release names none.
 */
import { describe, expect, it } from "vitest";
import {
  buildManifest,
  parseHealth,
  parseManifest,
  type ReleaseHealth,
} from "../../../control/shared/release/index.js";

const ARTIFACTS = { "linux-amd64": { sha256: "a".repeat(64), size: 10, file: "agent" } };
const input = {
  version: "1.2.0",
  sequence: 3,
  expires: new Date("2030-01-01T00:00:00Z"),
  artifacts: ARTIFACTS,
};

describe("a release's health checks", () => {
  it("fills in the defaults of a command and an HTTP check", () => {
    expect(
      parseHealth({
        checks: [
          { kind: "command", name: "selftest", command: "/usr/bin/true" },
          { kind: "http", name: "api", port: 8080 },
        ],
      }),
    ).toEqual({
      checks: [
        {
          kind: "command",
          name: "selftest",
          command: "/usr/bin/true",
          args: [],
          timeoutSeconds: 10,
          exitCode: 0,
        },
        { kind: "http", name: "api", port: 8080, path: "/", timeoutSeconds: 10 },
      ],
      periodSeconds: 0,
      intervalSeconds: 5,
    });
  });

  it.each([
    [{}, /health.checks must be a list of 1 to 16 checks/],
    [{ checks: [] }, /health.checks must be a list of 1 to 16 checks/],
    [
      { checks: [{ kind: "shell", name: "x" }] },
      /health.checks\[0\].kind must be "command" or "http"/,
    ],
    [
      { checks: [{ kind: "http", name: "x", port: 0 }] },
      /health.checks\[0\].port must be an integer from 1 to 65535/,
    ],
    [
      { checks: [{ kind: "http", name: "x", port: 80, path: "healthz" }] },
      /path must start with "\/"/,
    ],
    [
      { checks: [{ kind: "http", name: "x", port: 80, host: "10.0.0.1" }] },
      /unknown field\(s\) "host"/,
    ],
    [
      { checks: [{ kind: "command", name: "x", command: "t", timeoutSeconds: 0 }] },
      /timeoutSeconds must be an integer from 1 to 300/,
    ],
    [
      { checks: [{ kind: "command", name: "x", command: "t", args: [1] }] },
      /args must be a list of at most 64 strings/,
    ],
    [
      { checks: [{ kind: "command", name: "bad name", command: "t" }] },
      /name must be 1 to 64 characters/,
    ],
    [
      {
        checks: [
          { kind: "http", name: "x", port: 80 },
          { kind: "http", name: "x", port: 81 },
        ],
      },
      /names check "x" twice/,
    ],
    [
      { checks: [{ kind: "http", name: "x", port: 80 }], periodSeconds: 3601 },
      /periodSeconds must be an integer from 0 to 3600/,
    ],
    [
      { checks: [{ kind: "http", name: "x", port: 80 }], retries: 3 },
      /unknown field\(s\) "retries"/,
    ],
  ])("refuses %j naming the field", (health, message) => {
    expect(() => parseHealth(health)).toThrow(message);
    const bytes = new TextEncoder().encode(
      JSON.stringify({
        product: "agent",
        version: "1.2.0",
        sequence: 3,
        expires: "2030-01-01T00:00:00Z",
        artifacts: ARTIFACTS,
        health,
      }),
    );
    expect(() => parseManifest(bytes)).toThrow(
      expect.objectContaining({ reason: "malformed_manifest" }),
    );
  });

  it("carries the checks in the signed bytes, and leaves the bytes as before without them", () => {
    const health: ReleaseHealth = {
      checks: [{ kind: "http", name: "api", port: 8080, path: "/healthz", timeoutSeconds: 3 }],
      periodSeconds: 60,
      intervalSeconds: 10,
    };
    const bytes = buildManifest({ ...input, health });
    expect(parseManifest(bytes).health).toEqual(health);
    const plain = new TextDecoder().decode(buildManifest(input));
    expect(plain).not.toContain("health");
    expect(parseManifest(buildManifest(input)).health).toBeUndefined();
  });
});
