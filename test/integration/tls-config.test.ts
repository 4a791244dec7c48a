import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../control/config.js";
import { tlsPath } from "../fixtures/tls/index.js";

function problemsOf(tls: unknown, env: Record<string, string> = {}): readonly string[] {
  try {
    loadConfig({ env, overrides: tls === undefined ? {} : { tls } });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe("tls configuration", () => {
  it("reads agent mTLS and admin TLS files, requiring client certificates by default", () => {
    const config = loadConfig({
      env: {},
      overrides: {
        tls: {
          agent: {
            cert: tlsPath("server"),
            key: tlsPath("server", "key"),
            clientCa: tlsPath("ca"),
          },
          admin: { cert: tlsPath("server"), key: tlsPath("server", "key") },
        },
      },
    });
    expect(config.tls.agent?.cert).toMatch(/BEGIN CERTIFICATE/);
    expect(config.tls.agent?.clientCa).toMatch(/BEGIN CERTIFICATE/);
    expect(config.tls.agent?.requireClientCert).toBe(true);
    expect(config.tls.admin?.key).toMatch(/PRIVATE KEY/);
  });

  it("is clear text when unset", () => {
    const config = loadConfig({ env: {} });
    expect(config.tls).toEqual({ agent: undefined, admin: undefined });
  });

  it("takes file paths from the environment", () => {
    const config = loadConfig({
      env: {
        AGENT_CONTROL_AGENT_TLS_CERT: tlsPath("server"),
        AGENT_CONTROL_AGENT_TLS_KEY: tlsPath("server", "key"),
        AGENT_CONTROL_AGENT_TLS_CLIENT_CA: tlsPath("ca"),
        AGENT_CONTROL_AGENT_TLS_REQUIRE_CLIENT_CERT: "false",
        AGENT_CONTROL_ADMIN_TLS_CERT: tlsPath("server"),
        AGENT_CONTROL_ADMIN_TLS_KEY: tlsPath("server", "key"),
      },
    });
    expect(config.tls.agent?.requireClientCert).toBe(false);
    expect(config.tls.admin).toBeDefined();
  });

  it.each([
    [{ agent: { cert: tlsPath("server") } }, /tls\.agent\.key: must be set together/],
    [{ admin: { key: tlsPath("server", "key") } }, /tls\.admin\.cert: must be set together/],
    [
      { agent: { cert: "/nonexistent/cert.pem", key: tlsPath("server", "key") } },
      /tls\.agent\.cert: cannot read \/nonexistent\/cert\.pem \(ENOENT\)/,
    ],
    [
      { agent: { cert: tlsPath("server", "key"), key: tlsPath("server", "key") } },
      /tls\.agent\.cert: .* holds no PEM certificate/,
    ],
    [
      { agent: { cert: tlsPath("server"), key: tlsPath("node-a", "key") } },
      /tls\.agent\.key: does not fit the certificate/,
    ],
    [
      { agent: { clientCa: tlsPath("ca") } },
      /tls\.agent\.clientCa: needs tls\.agent\.cert and tls\.agent\.key/,
    ],
    [
      {
        agent: { cert: tlsPath("server"), key: tlsPath("server", "key"), requireClientCert: true },
      },
      /tls\.agent\.requireClientCert: needs tls\.agent\.clientCa/,
    ],
    [
      {
        agent: {
          cert: tlsPath("server"),
          key: tlsPath("server", "key"),
          clientCa: tlsPath("ca"),
          requireClientCert: "yes please",
        },
      },
      /tls\.agent\.requireClientCert: must be true or false/,
    ],
    [
      { agent: { cert: 42, key: tlsPath("server", "key") } },
      /tls\.agent\.cert: must be a file path/,
    ],
    [{ agnet: {} }, /tls\.agnet: unknown setting/],
    [
      { admin: { cert: tlsPath("server"), key: tlsPath("server", "key"), ca: "x" } },
      /tls\.admin\.ca: unknown setting/,
    ],
    ["on", /tls: must be an object/],
  ])("refuses %j naming the bad value", (tls, problem) => {
    expect(problemsOf(tls).join("\n")).toMatch(problem);
  });

  it("names a bad environment value by its key", () => {
    const problems = problemsOf(undefined, {
      AGENT_CONTROL_ADMIN_TLS_CERT: "/nonexistent/admin.pem",
      AGENT_CONTROL_ADMIN_TLS_KEY: tlsPath("server", "key"),
    });
    expect(problems.join("\n")).toMatch(/tls\.admin\.cert: cannot read \/nonexistent\/admin\.pem/);
  });
});
