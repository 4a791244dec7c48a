import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256OfText } from "../../../control/auth/secrets.js";
import { ConfigError, loadConfig } from "../../../control/config.js";
import { generateKeyPair } from "../../../control/shared/release/index.js";

const PINS = await Promise.all([1, 2, 3].map(async () => (await generateKeyPair()).pin));

/** The problems loadConfig names for these options (none when it loads). */
function problemsOf(options: Parameters<typeof loadConfig>[0]): readonly string[] {
  try {
    loadConfig(options);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

async function configFile(content: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "config-test-"));
  const file = join(dir, "control.json");
  await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("Control's configuration", () => {
  it("uses the documented defaults when nothing is set", () => {
    const config = loadConfig({ env: {} });
    expect(config.dataDir).toBe(".data");
    expect(config.agentAddr).toEqual({ host: "127.0.0.1", port: 7443 });
    expect(config.adminAddr).toEqual({ host: "127.0.0.1", port: 7080 });
    expect(config.policy).toEqual({
      minBatchDurationSeconds: 1800,
      firstBatchMaxPercent: 5,
      maxBatches: 10,
    });
    expect(config.timeouts).toEqual({
      reconnectSeconds: 600,
      configGraceSeconds: 60,
      heartbeatSeconds: 10,
      offlineAfterSeconds: 120,
      agentConnectionAuthSeconds: 10,
      adminHeadersSeconds: 15,
      adminRequestSeconds: 300,
      adminKeepAliveSeconds: 65,
      adminIdleSeconds: 300,
    });
    expect(config.worker.intervalMs).toBe(5000);
    expect(config.release).toEqual({ pins: [], threshold: 1 });
  });

  it("lets environment variables win over the file", async () => {
    const file = await configFile({
      adminAddr: "127.0.0.1:9000",
      release: { threshold: 3, pins: PINS },
    });
    const config = loadConfig({
      file,
      env: { AGENT_CONTROL_ADMIN_ADDR: "127.0.0.2:9100", AGENT_CONTROL_RELEASE_THRESHOLD: "2" },
    });
    expect(config.adminAddr).toEqual({ host: "127.0.0.2", port: 9100 });
    expect(config.release).toEqual({ pins: PINS, threshold: 2 });
  });

  it("reads the config file named by AGENT_CONTROL_CONFIG", async () => {
    const file = await configFile({
      worker: { intervalMs: 250 },
      policy: { minBatchDurationSeconds: 5 },
    });
    const config = loadConfig({ env: { AGENT_CONTROL_CONFIG: file } });
    expect(config.worker.intervalMs).toBe(250);
    expect(config.policy.minBatchDurationSeconds).toBe(5);
  });

  it("names every bad value in one error", async () => {
    const file = await configFile({
      policy: { maxBatches: 0 },
      timeouts: { heartbeatSeconds: "soon" },
      colour: "blue",
    });
    let error: unknown;
    try {
      loadConfig({ file, env: { AGENT_CONTROL_AGENT_ADDR: "nowhere", DATABASE_URL: "mysql://x" } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toMatch(/policy\.maxBatches/);
    expect(problems).toMatch(/timeouts\.heartbeatSeconds/);
    expect(problems).toMatch(/colour: unknown setting/);
    expect(problems).toMatch(/agentAddr: "nowhere" must be HOST:PORT/);
    expect(problems).toMatch(/databaseUrl: must start with postgres:\/\/ or postgresql:\/\//);
  });

  it("refuses a config file that is not JSON, saying which file", async () => {
    const file = await configFile("{ not json");
    expect(() => loadConfig({ file, env: {} })).toThrow(new RegExp(`config file ${file}`));
  });

  it("never echoes a database password in an error", () => {
    expect(() => loadConfig({ env: { DATABASE_URL: "postgres://user:hunter2@" } })).toThrow(
      ConfigError,
    );
    try {
      loadConfig({ env: { DATABASE_URL: "postgres://user:hunter2@" } });
    } catch (error) {
      expect(String((error as Error).message)).not.toMatch(/hunter2/);
    }
  });

  it.each<[string, Record<string, string>, string]>([
    [
      "an operator token no header can carry, naming the variable and never the token",
      { AGENT_CONTROL_ADMIN_TOKEN: "operator-token-0123\n456789" },
      "adminToken: must be printable ASCII without spaces or newlines (from AGENT_CONTROL_ADMIN_TOKEN)",
    ],
    [
      "an address with a newline, shown escaped on one line",
      { AGENT_CONTROL_AGENT_ADDR: "0.0.0.0:7443\nx" },
      'agentAddr: "0.0.0.0:7443\\u000ax" must be HOST:PORT with a port 0-65535 (from AGENT_CONTROL_AGENT_ADDR)',
    ],
    [
      "a pin that is no ed25519 pin",
      { AGENT_CONTROL_RELEASE_PINS: "ed25519:abc" },
      "release.pins[0]: pin",
    ],
    [
      "a threshold no number of pinned keys can meet",
      { AGENT_CONTROL_RELEASE_PINS: "PIN0", AGENT_CONTROL_RELEASE_THRESHOLD: "2" },
      "release.threshold: 2 signatures can never come from 1 pinned key(s) (from AGENT_CONTROL_RELEASE_THRESHOLD)",
    ],
    [
      "a data directory that is a file",
      { AGENT_CONTROL_DATA_DIR: "/proc/version" },
      'dataDir: "/proc/version" is not a directory (from AGENT_CONTROL_DATA_DIR)',
    ],
    [
      "an unreadable admin tokens file",
      { AGENT_CONTROL_ADMIN_TOKENS_FILE: "/nonexistent/tokens.json" },
      "adminTokensFile /nonexistent/tokens.json: cannot read it (ENOENT) (from AGENT_CONTROL_ADMIN_TOKENS_FILE)",
    ],
    ["a log level", { AGENT_CONTROL_LOG_LEVEL: "loud" }, "log.level: must be one of"],
    [
      "a threshold that is no number",
      { AGENT_CONTROL_RELEASE_THRESHOLD: "two" },
      "release.threshold",
    ],
    ["a database URL", { DATABASE_URL: "not a url" }, "databaseUrl:"],
  ])("refuses %s with one problem", (_, env, problem) => {
    const withPin = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.replace("PIN0", PINS[0]!)]),
    );
    const problems = problemsOf({ env: withPin });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
    expect(problems[0]).not.toContain("\n");
    expect(problems[0]).not.toContain("456789");
  });

  it("reads admin tokens given in clear or by hash, each with an optional RFC 3339 expiry", () => {
    const config = loadConfig({
      env: {},
      overrides: {
        adminTokens: [
          {
            name: "ci",
            role: "operator",
            token: "ci-token-0123456789",
            expires: "2030-01-31T12:00:00Z",
          },
          { name: "grafana", role: "viewer", sha256: sha256OfText("grafana-token-0123456789") },
        ],
      },
    });
    expect(config.adminTokens).toEqual([
      {
        name: "ci",
        role: "operator",
        sha256: sha256OfText("ci-token-0123456789"),
        expires: new Date("2030-01-31T12:00:00Z"),
      },
      {
        name: "grafana",
        role: "viewer",
        sha256: sha256OfText("grafana-token-0123456789"),
        expires: undefined,
      },
    ]);
    expect(JSON.stringify(config)).not.toContain("ci-token-0123456789");
  });

  it("refuses admin token entries that are not what they seem", () => {
    const problems = problemsOf({
      env: {},
      overrides: {
        adminTokens: [
          {
            name: "a",
            role: "operator",
            token: "token-a-0123456789",
            expire: "2030-01-01T00:00:00Z",
          },
          { name: "b", role: "operator", token: "token-b-0123456789", sha256: "0".repeat(64) },
          { name: "c", role: "root", sha256: "0".repeat(64) },
          { name: "d", role: "viewer", token: "short" },
          { name: "e", role: "viewer", token: "token e 0123456789" },
          { name: "f", role: "viewer", token: "token-f-0123456789", expires: "tomorrow" },
          { name: "admin", role: "viewer", token: "token-g-0123456789" },
          { name: "h", role: "viewer", token: "token-h-0123456789" },
          { name: "h", role: "viewer", token: "token-i-0123456789" },
          { name: "j", role: "viewer", token: "token-h-0123456789" },
        ],
      },
    });
    expect(problems).toEqual([
      "adminTokens[0].expire: unknown key (expected {name, role, token or sha256, expires?})",
      "adminTokens[1]: give exactly one of token and sha256",
      'adminTokens[2].role: must be "viewer" or "operator"',
      "adminTokens[3].token: must be a string of at least 16 characters",
      "adminTokens[4].token: must be printable ASCII without spaces or newlines",
      "adminTokens[5].expires: must be an RFC 3339 time such as 2030-01-31T12:00:00Z",
      'adminTokens: the name "admin" is already used by the operator token "admin"',
      'adminTokens: the name "h" is already used by adminTokens "h"',
      'adminTokens: "j" is the same token as adminTokens "h"',
    ]);
  });

  it("reads the admin tokens file, refusing a bad one before anything starts", async () => {
    const good = await configFile([
      {
        name: "ci",
        role: "operator",
        token: "ci-token-0123456789",
        expires: "2030-01-31T12:00:00+01:00",
      },
    ]);
    await chmod(good, 0o600);
    const config = loadConfig({ env: { AGENT_CONTROL_ADMIN_TOKENS_FILE: good } });
    expect(config.adminTokensFile).toEqual({
      path: good,
      tokens: [
        {
          name: "ci",
          role: "operator",
          sha256: sha256OfText("ci-token-0123456789"),
          expires: new Date("2030-01-31T11:00:00Z"),
        },
      ],
    });
    const notJson = await configFile("[{");
    await chmod(notJson, 0o600);
    expect(problemsOf({ env: {}, overrides: { adminTokensFile: notJson } })[0]).toMatch(
      new RegExp(`^adminTokensFile ${notJson}: not JSON \\(`),
    );
    const clash = await configFile([
      { name: "viewer", role: "viewer", token: "other-token-0123456789" },
    ]);
    await chmod(clash, 0o600);
    expect(
      problemsOf({
        env: {},
        overrides: {
          adminTokensFile: clash,
          adminTokens: [{ name: "viewer", role: "viewer", token: "viewer-token-0123456789" }],
        },
      }),
    ).toEqual([
      `adminTokensFile ${clash}: the name "viewer" is already used by adminTokens "viewer"`,
    ]);
  });

  it("refuses an admin tokens file other users may read or write, naming the fix", async () => {
    const tokens = [{ name: "ci", role: "operator", token: "ci-token-0123456789" }];
    for (const mode of [0o644, 0o660, 0o606, 0o640]) {
      const file = await configFile(tokens);
      await chmod(file, mode);
      expect(problemsOf({ env: {}, overrides: { adminTokensFile: file } })).toEqual([
        `adminTokensFile ${file}: other users may read or write it (mode ${mode.toString(8)}); it holds admin credentials: chmod 600 ${file}`,
      ]);
    }
    const file = await configFile(tokens);
    await chmod(file, 0o400);
    expect(problemsOf({ env: {}, overrides: { adminTokensFile: file } })).toEqual([]);
  });
});
