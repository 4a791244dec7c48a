import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../control/config.js";

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
    expect(config.agentAddr).toEqual({ host: "0.0.0.0", port: 7443 });
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
    });
    expect(config.worker.intervalMs).toBe(5000);
    expect(config.release).toEqual({ pins: [], threshold: 1 });
  });

  it("lets environment variables win over the file", async () => {
    const file = await configFile({
      adminAddr: "127.0.0.1:9000",
      release: { threshold: 3, pins: ["a", "b", "c"] },
    });
    const config = loadConfig({
      file,
      env: { AGENT_CONTROL_ADMIN_ADDR: "0.0.0.0:9100", AGENT_CONTROL_RELEASE_THRESHOLD: "2" },
    });
    expect(config.adminAddr).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(config.release).toEqual({ pins: ["a", "b", "c"], threshold: 2 });
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
});
