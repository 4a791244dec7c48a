/**
 * agentctl --ca-file: the real binary against a real Control whose admin API is served over
 * HTTPS with a certificate a private CA signed (test/fixtures/tls).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tlsConfig, tlsFile, tlsPath } from "../fixtures/tls/index.js";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

describe("agentctl --ca-file against a Control serving its admin API over TLS", {
  timeout: 120_000,
}, () => {
  let tc: TestControl;
  let env: Record<string, string>;

  beforeAll(async () => {
    tc = await startTestControl({
      config: { tls: tlsConfig({ admin: true }) },
      adminCa: tlsFile("ca"),
    });
    expect(tc.adminUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    env = { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
  });

  afterAll(async () => {
    await tc?.stop();
  });

  it("trusts the private CA given with --ca-file", async () => {
    const result = await agentctl(["node", "list", "--json", "--ca-file", tlsPath("ca")], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty("nodes");
  });

  it("takes the CA from AGENTCTL_CA_FILE too", async () => {
    const result = await agentctl(["token", "list", "--json"], {
      ...env,
      AGENTCTL_CA_FILE: tlsPath("ca"),
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty("tokens");
  });

  it("refuses the server's certificate without the CA, or with another CA, saying why", async () => {
    for (const extra of [[], ["--ca-file", tlsPath("other-ca")]]) {
      const result = await agentctl(["node", "list", ...extra], env);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /^agentctl: cannot trust Control at https:[^\n]*certificate[^\n]*--ca-file[^\n]*\n$/,
      );
    }
  });

  it.each([
    [
      "a missing file",
      "/nonexistent/ca.pem",
      "--ca-file /nonexistent/ca.pem: cannot read it (ENOENT)",
    ],
    ["a file without a certificate", tlsPath("ca", "key"), "holds no PEM certificate"],
  ])("refuses %s with exit 2 and one line, contacting nothing", async (_, file, message) => {
    const result = await agentctl(["node", "list", "--ca-file", file], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^agentctl: [^\n]+\n$/);
    expect(result.stderr).toContain(message);
  });
});
