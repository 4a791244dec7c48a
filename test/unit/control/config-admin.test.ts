import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../control/config.js";
import { adminServerLimits } from "../../../control/config-admin.js";

const MiB = 1024 * 1024;

function problemsOf(overrides: Record<string, unknown>): readonly string[] {
  try {
    loadConfig({ env: {}, overrides });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe("the admin listener's limits in the config", () => {
  it("uses the documented defaults when nothing is set", () => {
    const config = loadConfig({ env: {} });
    expect(adminServerLimits(config)).toEqual({
      maxConnections: 4096,
      connectionsPerAddress: 256,
      requestBytes: MiB,
      releaseBytes: 256 * MiB,
      bytesInFlight: 512 * MiB,
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 300_000,
      bodyTimeoutMs: 300_000,
      keepAliveTimeoutMs: 65_000,
      idleTimeoutMs: 300_000,
    });
  });

  it("derives the bytes in flight from a configured release limit", () => {
    const config = loadConfig({ env: {}, overrides: { limits: { adminReleaseBytes: 8 * MiB } } });
    expect(config.limits.adminBytesInFlight).toBe(16 * MiB);
  });

  it("reads every key from the file's limits and timeouts", () => {
    const config = loadConfig({
      env: {},
      overrides: {
        limits: {
          adminMaxConnections: 10,
          adminConnectionsPerAddress: 3,
          adminRequestBytes: 65536,
          adminReleaseBytes: 4 * MiB,
          adminBytesInFlight: 5 * MiB,
        },
        timeouts: {
          adminHeadersSeconds: 0.5,
          adminRequestSeconds: 2,
          adminKeepAliveSeconds: 1,
          adminIdleSeconds: 0.5,
        },
      },
    });
    expect(adminServerLimits(config)).toMatchObject({
      maxConnections: 10,
      connectionsPerAddress: 3,
      requestBytes: 65536,
      releaseBytes: 4 * MiB,
      bytesInFlight: 5 * MiB,
      headersTimeoutMs: 500,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 1000,
      idleTimeoutMs: 500,
    });
  });

  it("names each bad value", () => {
    const problems = problemsOf({
      limits: {
        adminMaxConnections: 0,
        adminRequestBytes: 10,
        adminReleaseBytes: "lots",
        adminBytesInFlight: 1.5,
      },
      timeouts: {
        adminHeadersSeconds: -1,
        adminRequestSeconds: 0,
        adminKeepAliveSeconds: "x",
        adminIdleSeconds: 1e9,
      },
    });
    for (const key of [
      "limits.adminMaxConnections",
      "limits.adminRequestBytes",
      "limits.adminReleaseBytes",
      "limits.adminBytesInFlight",
      "timeouts.adminHeadersSeconds",
      "timeouts.adminRequestSeconds",
      "timeouts.adminKeepAliveSeconds",
      "timeouts.adminIdleSeconds",
    ]) {
      expect(problems.some((p) => p.startsWith(`${key}:`))).toBe(true);
    }
  });

  it("refuses bytes in flight below the largest body, and a request timeout below the headers'", () => {
    const problems = problemsOf({
      limits: { adminReleaseBytes: 64 * MiB, adminBytesInFlight: 32 * MiB },
      timeouts: { adminHeadersSeconds: 30, adminRequestSeconds: 10 },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^timeouts\.adminRequestSeconds: 10 must be at least/),
      expect.stringMatching(/^limits\.adminBytesInFlight: 33554432 must be at least/),
    ]);
  });
});
