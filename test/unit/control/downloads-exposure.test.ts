/**
 * A downloads listener facing the network is held to what the agent and admin listeners
 * are: clear text off loopback needs `allowInsecure`, and a node credential is required by
 * default (an unauthenticated client could otherwise hold download slots; it is also how
 * an artifact stays the fleet's).
 */
import { describe, expect, it } from "vitest";
import { ConfigError, listenerFacts, loadConfig } from "../../../control/config.js";
import { clearTextExposed } from "../../../control/config-clear-text.js";
import { tlsPath } from "../../fixtures/tls/index.js";

const DB = { databaseUrl: "postgres://x@localhost/x" };
const DOWNLOADS_TLS = { downloads: { cert: tlsPath("server"), key: tlsPath("server", "key") } };
const ADMIN_TLS = { admin: { cert: tlsPath("server"), key: tlsPath("server", "key") } };

function problems(overrides: Record<string, unknown>): string[] {
  try {
    loadConfig({ env: {}, overrides: { ...DB, ...overrides } });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe("a clear-text downloads listener off loopback", () => {
  it("is refused without allowInsecure, in the line naming TLS and allowInsecure", () => {
    expect(problems({ downloads: { addr: "0.0.0.0:7081" } })).toEqual([
      "downloads.addr 0.0.0.0:7081: clear text on a non-loopback address; configure TLS (tls.downloads; agentctl tls init writes the files) or set allowInsecure / AGENT_CONTROL_ALLOW_INSECURE=true",
    ]);
  });

  it("starts with TLS, on loopback, or with allowInsecure (then Control warns about it)", () => {
    expect(problems({ downloads: { addr: "0.0.0.0:7081" }, tls: DOWNLOADS_TLS })).toEqual([]);
    expect(problems({ downloads: { addr: "127.0.0.1:7081" } })).toEqual([]);
    const config = loadConfig({
      env: {},
      overrides: { ...DB, downloads: { addr: "0.0.0.0:7081" }, allowInsecure: true },
    });
    expect(clearTextExposed(listenerFacts(config)).map((l) => l.name)).toEqual(["downloads.addr"]);
  });
});

describe("the downloads credential", () => {
  const requireAuth = (overrides: Record<string, unknown>) =>
    loadConfig({ env: {}, overrides: { ...DB, ...overrides } }).downloads.requireAuth;

  it("is required by default on a listener off loopback", () => {
    expect(requireAuth({ downloads: { addr: "0.0.0.0:7081" }, tls: DOWNLOADS_TLS })).toBe(true);
    expect(requireAuth({ downloads: { addr: "10.0.0.5:7081" }, tls: DOWNLOADS_TLS })).toBe(true);
  });

  it("is required by default when downloads are served on an admin port off loopback", () => {
    expect(requireAuth({ adminAddr: "0.0.0.0:7080", tls: ADMIN_TLS })).toBe(true);
  });

  it("is not required by default on loopback (the demo, the tests)", () => {
    expect(requireAuth({})).toBe(false);
    expect(requireAuth({ downloads: { addr: "127.0.0.1:0" } })).toBe(false);
  });

  it("follows an explicit setting either way", () => {
    expect(
      requireAuth({ downloads: { addr: "0.0.0.0:7081", requireAuth: false }, tls: DOWNLOADS_TLS }),
    ).toBe(false);
    expect(requireAuth({ downloads: { addr: "127.0.0.1:0", requireAuth: true } })).toBe(true);
  });
});

describe("downloads one client may hold", () => {
  it("defaults to 2 and takes downloads.maxPerClient", () => {
    expect(loadConfig({ env: {}, overrides: DB }).downloads.maxPerClient).toBe(2);
    expect(
      loadConfig({ env: {}, overrides: { ...DB, downloads: { maxPerClient: 8 } } }).downloads
        .maxPerClient,
    ).toBe(8);
  });

  it("refuses 0", () => {
    expect(problems({ downloads: { maxPerClient: 0 } })).toEqual([
      expect.stringMatching(/^downloads\.maxPerClient: /),
    ]);
  });
});
