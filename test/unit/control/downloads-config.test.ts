import { describe, expect, it } from "vitest";
import { ConfigError, type LoadConfigOptions, loadConfig } from "../../../control/config.js";
import { tlsFile, tlsPath } from "../../fixtures/tls/index.js";

function problemsOf(options: LoadConfigOptions): readonly string[] {
  try {
    loadConfig({ env: {}, ...options });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe("downloads configuration", () => {
  it("serves downloads on the admin port by default, without a credential (loopback), 64 at once, 2 per client", () => {
    const config = loadConfig({ env: {} });
    expect(config.downloads).toEqual({
      addr: undefined,
      requireAuth: false,
      maxConcurrent: 64,
      maxPerClient: 2,
      stallTimeoutSeconds: 60,
      maxConnections: 1024,
    });
    expect(config.tls.downloads).toBeUndefined();
  });

  it("takes the listener, the credential rule, the limit and TLS files from the environment", () => {
    const config = loadConfig({
      env: {
        AGENT_CONTROL_DOWNLOADS_ADDR: "0.0.0.0:7081",
        AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH: "true",
        AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT: "200",
        AGENT_CONTROL_DOWNLOADS_TLS_CERT: tlsPath("server"),
        AGENT_CONTROL_DOWNLOADS_TLS_KEY: tlsPath("server", "key"),
        AGENT_CONTROL_DOWNLOADS_TLS_CLIENT_CA: tlsPath("ca"),
      },
    });
    expect(config.downloads.addr).toEqual({ host: "0.0.0.0", port: 7081 });
    expect(config.downloads.requireAuth).toBe(true);
    expect(config.downloads.maxConcurrent).toBe(200);
    expect(config.tls.downloads?.cert).toMatch(/BEGIN CERTIFICATE/);
    expect(config.tls.downloads?.clientCa).toMatch(/BEGIN CERTIFICATE/);
  });

  it("reads the same from the config file's keys", () => {
    const config = loadConfig({
      env: {},
      overrides: {
        downloads: {
          addr: "[::1]:0",
          requireAuth: false,
          stallTimeoutSeconds: 5,
          maxConnections: 4096,
        },
        tls: { downloads: { cert: tlsPath("server"), key: tlsPath("server", "key") } },
      },
    });
    expect(config.downloads.addr).toEqual({ host: "::1", port: 0 });
    expect(config.downloads.stallTimeoutSeconds).toBe(5);
    expect(config.downloads.maxConnections).toBe(4096);
    expect(config.tls.downloads?.clientCa).toBeUndefined();
  });

  it("verifies the agent stream's client certificates on the downloads listener unless it has a client CA of its own", () => {
    const pair = { cert: tlsPath("server"), key: tlsPath("server", "key") };
    const agentCa = tlsFile("ca").toString();
    const inherited = loadConfig({
      env: {},
      overrides: {
        downloads: { addr: "127.0.0.1:0" },
        tls: { agent: { ...pair, clientCa: tlsPath("ca") }, downloads: pair },
      },
    });
    expect(inherited.tls.downloads?.clientCa).toBe(agentCa);
    const own = loadConfig({
      env: {},
      overrides: {
        downloads: { addr: "127.0.0.1:0" },
        tls: {
          agent: { ...pair, clientCa: tlsPath("ca") },
          downloads: { ...pair, clientCa: tlsPath("other-ca") },
        },
      },
    });
    expect(own.tls.downloads?.clientCa).toBe(tlsFile("other-ca").toString());
    // No downloads TLS: nothing to verify with (clear text, or the admin port).
    const clear = loadConfig({
      env: {},
      overrides: { tls: { agent: { ...pair, clientCa: tlsPath("ca") } } },
    });
    expect(clear.tls.downloads).toBeUndefined();
  });

  it.each<[string, LoadConfigOptions, RegExp]>([
    [
      "a malformed address",
      { env: { AGENT_CONTROL_DOWNLOADS_ADDR: "nowhere" } },
      /^downloads\.addr: "nowhere" must be HOST:PORT/,
    ],
    [
      "a port out of range",
      { overrides: { downloads: { addr: "0.0.0.0:70000" } } },
      /^downloads\.addr:/,
    ],
    [
      "requireAuth not a boolean",
      { env: { AGENT_CONTROL_DOWNLOADS_REQUIRE_AUTH: "maybe" } },
      /^downloads\.requireAuth: "maybe" must be true or false/,
    ],
    [
      "maxConcurrent of 0",
      { env: { AGENT_CONTROL_DOWNLOADS_MAX_CONCURRENT: "0" } },
      /^downloads\.maxConcurrent: "0" must be a number from 1/,
    ],
    [
      "an unknown key",
      { overrides: { downloads: { adr: "0.0.0.0:1" } } },
      /^downloads\.adr: unknown setting/,
    ],
    [
      "the admin port",
      { overrides: { adminAddr: "127.0.0.1:7080", downloads: { addr: "0.0.0.0:7080" } } },
      /^downloads\.addr: port 7080 is already taken by adminAddr/,
    ],
    [
      "the agent port",
      { overrides: { downloads: { addr: "0.0.0.0:7443" } } },
      /^downloads\.addr: port 7443 is already taken by agentAddr/,
    ],
    [
      "TLS without a listener",
      {
        overrides: {
          tls: { downloads: { cert: tlsPath("server"), key: tlsPath("server", "key") } },
        },
      },
      /^tls\.downloads: needs downloads\.addr/,
    ],
    [
      "a certificate without its key",
      {
        overrides: {
          downloads: { addr: "0.0.0.0:0" },
          tls: { downloads: { cert: tlsPath("server") } },
        },
      },
      /^tls\.downloads\.key: must be set together/,
    ],
    [
      "a client CA without a certificate",
      {
        overrides: {
          downloads: { addr: "0.0.0.0:0" },
          tls: { downloads: { clientCa: tlsPath("ca") } },
        },
      },
      /^tls\.downloads\.clientCa: needs tls\.downloads\.cert/,
    ],
    [
      "an unknown TLS key",
      {
        overrides: {
          downloads: { addr: "0.0.0.0:0" },
          tls: { downloads: { requireClientCert: true } },
        },
      },
      /^tls\.downloads\.requireClientCert: unknown setting/,
    ],
  ])("names %s", (_what, options, problem) => {
    const problems = problemsOf(options);
    expect(
      problems.some((p) => problem.test(p)),
      problems.join("\n"),
    ).toBe(true);
  });
});
