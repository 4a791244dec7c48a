/**
 * The agent listener's bounds on connections without an authenticated stream in the config:
 * `timeouts.agentConnectionAuthSeconds` and `limits.agentUnauthenticatedConnectionsPerAddress`
 * (security review finding 1), with their defaults and a message naming each bad value.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../control/config.js";

function problemsOf(overrides: Record<string, unknown>): readonly string[] {
  try {
    loadConfig({ env: {}, overrides });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe("the agent listener's unauthenticated-connection bounds in the config", () => {
  it("default to 10 seconds and 32 connections per address", () => {
    const config = loadConfig({ env: {} });
    expect(config.timeouts.agentConnectionAuthSeconds).toBe(10);
    expect(config.limits.agentUnauthenticatedConnectionsPerAddress).toBe(32);
  });

  it("reads both from the file's timeouts and limits", () => {
    const config = loadConfig({
      env: {},
      overrides: {
        timeouts: { agentConnectionAuthSeconds: 2.5 },
        limits: { agentUnauthenticatedConnectionsPerAddress: 500 },
      },
    });
    expect(config.timeouts.agentConnectionAuthSeconds).toBe(2.5);
    expect(config.limits.agentUnauthenticatedConnectionsPerAddress).toBe(500);
  });

  it.each([
    [
      { timeouts: { agentConnectionAuthSeconds: 0 } },
      "timeouts.agentConnectionAuthSeconds: 0 must be a number from 0.1 to 3600",
    ],
    [
      { timeouts: { agentConnectionAuthSeconds: "soon" } },
      'timeouts.agentConnectionAuthSeconds: "soon" must be a number from 0.1 to 3600',
    ],
    [
      { timeouts: { agentConnectionAuthSeconds: 86400 } },
      "timeouts.agentConnectionAuthSeconds: 86400 must be a number from 0.1 to 3600",
    ],
    [
      { limits: { agentUnauthenticatedConnectionsPerAddress: 0 } },
      "limits.agentUnauthenticatedConnectionsPerAddress: 0 must be a number from 1 to 1000000",
    ],
    [
      { limits: { agentUnauthenticatedConnectionsPerAddress: 2.5 } },
      "limits.agentUnauthenticatedConnectionsPerAddress: must be a whole number",
    ],
    [
      { limits: { agentUnauthenticatedConnectionsPerAddress: -3 } },
      "limits.agentUnauthenticatedConnectionsPerAddress: -3 must be a number from 1 to 1000000",
    ],
  ])("refuses %j with one problem naming the key and its range", (overrides, problem) => {
    expect(problemsOf(overrides)).toEqual([problem]);
  });
});
