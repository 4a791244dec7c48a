import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../control/config.js";
import { tlsConfig } from "../../fixtures/tls/index.js";

const DB = { databaseUrl: "postgres://x@localhost/x" };

function problems(overrides: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  try {
    loadConfig({ env, overrides: { ...DB, ...overrides } });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe("TLS by default: no clear text on a non-loopback listener", () => {
  it("listens for agents on loopback by default while no agent TLS is configured", () => {
    const config = loadConfig({ env: {}, overrides: DB });
    expect(config.agentAddr).toEqual({ host: "127.0.0.1", port: 7443 });
    expect(config.allowInsecure).toBe(false);
  });

  it("listens for agents on every interface by default once agent TLS is configured", () => {
    const config = loadConfig({ env: {}, overrides: { ...DB, tls: tlsConfig({}) } });
    expect(config.agentAddr).toEqual({ host: "0.0.0.0", port: 7443 });
  });

  it("refuses, in one line naming TLS and allowInsecure, clear-text agent and admin listeners off loopback", () => {
    const found = problems({ agentAddr: "0.0.0.0:7443", adminAddr: "10.0.0.5:7080" });
    expect(found).toEqual([
      "agentAddr 0.0.0.0:7443, adminAddr 10.0.0.5:7080: clear text on a non-loopback address; configure TLS (tls.agent, tls.admin; agentctl tls init writes the files) or set allowInsecure / AGENT_CONTROL_ALLOW_INSECURE=true",
    ]);
  });

  it.each([["127.0.0.1:7443"], ["127.8.0.1:7443"], ["[::1]:7443"], ["localhost:7443"]])(
    "allows clear text on loopback %s",
    (agentAddr) => {
      expect(problems({ agentAddr })).toEqual([]);
    },
  );

  it("allows clear text off loopback with allowInsecure, from the file or the environment", () => {
    expect(problems({ agentAddr: "0.0.0.0:7443", allowInsecure: true })).toEqual([]);
    expect(
      problems({ agentAddr: "0.0.0.0:7443" }, { AGENT_CONTROL_ALLOW_INSECURE: "true" }),
    ).toEqual([]);
  });

  it("allows a non-loopback agent listener with TLS", () => {
    expect(problems({ agentAddr: "0.0.0.0:7443", tls: tlsConfig({}) })).toEqual([]);
  });
});
