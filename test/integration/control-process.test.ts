/**
 * Control as a child process (`tsx control/main.ts`, as the demo and the bench run it) on
 * its embedded PostgreSQL: kill() ends Control itself, not only tsx's launcher, and leaves
 * the database server to be adopted; stop() drains and stops that server too.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlProcess, startControlProcess } from "../../agent-sim/demo/control-process.js";
import { freePort } from "../../control/db/embedded-postgres.js";
import { runControl } from "../helpers/process-fixtures.js";

const run = promisify(execFile);

/** Pids of the processes whose command line names `text`. */
async function processesNaming(text: string): Promise<number[]> {
  const { stdout } = await run("ps", ["-A", "-o", "pid=,args="]);
  return stdout
    .split("\n")
    .filter((line) => line.includes(text))
    .map((line) => Number.parseInt(line.trim(), 10));
}

/**
 * Pids of the processes holding a listening TCP socket on `address`'s port, read from
 * /proc/net/tcp and each process's fds. Connecting would not tell: a connect to a free port in
 * the ephemeral range can meet itself, and another test may bind a port after Control freed it.
 */
async function listenerPids(address: string): Promise<number[]> {
  const port = Number(address.split(":")[1]).toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set(
    (await readFile("/proc/net/tcp", "utf8"))
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(`:${port}`) && f[3] === "0A")
      .map((f) => `socket:[${f[9]}]`),
  );
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => "");
      if (inodes.has(target)) {
        pids.push(Number(entry));
        break;
      }
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Config files with one bad value each, written as `NAME.json` and named `FILE:NAME` below. */
const BAD_FILES: Record<string, unknown> = {
  "bytes-rate": { limits: { agentStreamBytesPerSecond: 0 } },
  "bytes-burst": { limits: { agentStreamBurstBytes: 2048 } },
  "per-credential": { limits: { handshakesPerCredential: 0 } },
  "gate-hosts": { gates: { allowedHosts: ["https://prometheus.internal:9090"] } },
};

describe("Control as a child process on its embedded PostgreSQL", { timeout: 150_000 }, () => {
  let dataDir = "";
  let agentAddr = "";
  let adminAddr = "";
  let control: ControlProcess | undefined;
  const start = () =>
    startControlProcess({
      dataDir,
      agentAddr,
      adminAddr,
      config: {},
      // Empty counts as unset: Control starts its embedded PostgreSQL under the data dir.
      env: { DATABASE_URL: "" },
      readyTimeoutMs: 120_000,
    });
  const postmasterPid = async () =>
    Number.parseInt(await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8"), 10);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agent-control-process-"));
    agentAddr = `127.0.0.1:${await freePort()}`;
    adminAddr = `127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    await control?.kill();
    const pid = await postmasterPid().catch(() => 0);
    if (pid > 0 && alive(pid)) process.kill(pid, "SIGINT");
    for (let waited = 0; waited < 20_000 && pid > 0 && alive(pid); waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it("kill() leaves no Control process and no listener, and the embedded PostgreSQL running", async () => {
    control = await start();
    const configFile = join(dataDir, "config.json");
    // tsx's launcher and the Node.js process it runs Control in.
    const controlPids = await processesNaming(configFile);
    expect(controlPids).toHaveLength(2);
    const heldByControl = async (address: string) =>
      (await listenerPids(address)).filter((pid) => controlPids.includes(pid));
    expect(await heldByControl(agentAddr)).toHaveLength(1);
    expect(await heldByControl(adminAddr)).toHaveLength(1);
    const postgres = await postmasterPid();

    await control.kill();

    expect(await processesNaming(configFile)).toEqual([]);
    // Nothing started for this data dir (its PostgreSQL included) still listens there.
    const heldFromDataDir = async (address: string) => {
      const pids = [];
      for (const pid of await listenerPids(address)) {
        const args = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        if (args.includes(dataDir)) pids.push(pid);
      }
      return pids;
    };
    expect(await heldFromDataDir(agentAddr)).toEqual([]);
    expect(await heldFromDataDir(adminAddr)).toEqual([]);
    expect(alive(postgres)).toBe(true);
  });

  it("a Control started after kill() adopts that PostgreSQL; stop() drains, exits 0 and stops it", async () => {
    const postgres = await postmasterPid();
    control = await start();
    expect(await postmasterPid()).toBe(postgres);
    expect(await control.stop()).toBe(0);
    expect(await processesNaming(join(dataDir, "config.json"))).toEqual([]);
    expect(alive(postgres)).toBe(false);
  });
});

describe("Control refuses bad flags and settings before anything starts", {
  timeout: 120_000,
}, () => {
  let dir = "";
  let dataDir = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-bad-config-"));
    // mkdtemp makes a 0700 directory, which the embedded server's `postgres` user (when the
    // tests run as root) could not enter: that would be a second problem on every line.
    await chmod(dir, 0o755);
    dataDir = join(dir, "data");
    await writeFile(join(dir, "a-file"), "");
    await writeFile(
      join(dir, "bad-timeouts.json"),
      JSON.stringify({ timeouts: { heartbeatSeconds: "soon" } }),
    );
    for (const [name, content] of Object.entries(BAD_FILES)) {
      await writeFile(join(dir, `${name}.json`), JSON.stringify(content));
    }
    await writeFile(
      join(dir, "bad-tokens.json"),
      JSON.stringify([
        { name: "ci", role: "operator", token: "ci-token-0123456789", expires: "soon" },
      ]),
      { mode: 0o600 },
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each<[string, string[], Record<string, string>, string]>([
    ["an unknown flag", ["--bogus"], {}, "control: Unknown option '--bogus'"],
    ["an empty --config", ["--config", ""], {}, "control: --config must name a file"],
    [
      "a missing config file",
      ["--config", "/nonexistent/control.json"],
      {},
      "control: config file /nonexistent/control.json:",
    ],
    [
      "a bad value in the config file",
      ["--config", "BAD_TIMEOUTS"],
      {},
      'control: timeouts.heartbeatSeconds: "soon" must be a number',
    ],
    [
      "an operator token no header can carry",
      [],
      { AGENT_CONTROL_ADMIN_TOKEN: "operator-token\n0123456789" },
      "control: adminToken: must be printable ASCII without spaces or newlines (from AGENT_CONTROL_ADMIN_TOKEN)",
    ],
    [
      "a port out of range",
      [],
      { AGENT_CONTROL_AGENT_ADDR: "0.0.0.0:99999" },
      "control: agentAddr: ",
    ],
    [
      "a threshold of 0",
      [],
      { AGENT_CONTROL_RELEASE_THRESHOLD: "0" },
      "control: release.threshold: ",
    ],
    [
      "a malformed pin",
      [],
      { AGENT_CONTROL_RELEASE_PINS: "ed25519:xyz" },
      "control: release.pins[0]: ",
    ],
    ["a data dir that is a file", [], { AGENT_CONTROL_DATA_DIR: "A_FILE" }, "control: dataDir: "],
    [
      "a stream byte rate of 0",
      ["--config", "FILE:bytes-rate"],
      {},
      "control: limits.agentStreamBytesPerSecond: ",
    ],
    [
      "a stream byte burst below the largest agent message",
      ["--config", "FILE:bytes-burst"],
      {},
      "control: limits.agentStreamBurstBytes (2048) must be at least limits.maxAgentMessageBytes (65536)",
    ],
    [
      "no handshake per credential",
      ["--config", "FILE:per-credential"],
      {},
      "control: limits.handshakesPerCredential: ",
    ],
    [
      "a gate host given as a URL",
      ["--config", "FILE:gate-hosts"],
      {},
      'control: gates.allowedHosts[0]: "https://prometheus.internal:9090" must be HOST or HOST:PORT',
    ],
    [
      "a missing admin tokens file",
      [],
      { AGENT_CONTROL_ADMIN_TOKENS_FILE: "/nonexistent/tokens.json" },
      "control: adminTokensFile /nonexistent/tokens.json: cannot read it (ENOENT)",
    ],
    [
      "a bad admin tokens file",
      [],
      { AGENT_CONTROL_ADMIN_TOKENS_FILE: "BAD_TOKENS" },
      "[0].expires: must be an RFC 3339 time",
    ],
    [
      "half a TLS pair",
      [],
      { AGENT_CONTROL_ADMIN_TLS_CERT: "/nonexistent.pem" },
      "control: tls.admin.key: must be set together with tls.admin.cert",
    ],
  ])("%s: exit 2, one line naming it, no database started", async (_, args, env, line) => {
    const fill = (text: string) =>
      text
        .replace("BAD_TIMEOUTS", join(dir, "bad-timeouts.json"))
        .replace("BAD_TOKENS", join(dir, "bad-tokens.json"))
        .replace("A_FILE", join(dir, "a-file"))
        .replace(/^FILE:(.+)$/, (_, name: string) => join(dir, `${name}.json`));
    const result = await runControl(args.map(fill), {
      AGENT_CONTROL_DATA_DIR: dataDir,
      AGENT_CONTROL_AGENT_ADDR: "127.0.0.1:0",
      AGENT_CONTROL_ADMIN_ADDR: "127.0.0.1:0",
      // Empty counts as unset: had the settings passed, Control would start its embedded PostgreSQL.
      DATABASE_URL: "",
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v)])),
    });
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^control: [^\n]+\n$/);
    expect(result.stderr).toContain(line);
    expect(result.stderr).not.toContain("0123456789");
    expect(result.code).toBe(2);
    expect(existsSync(join(dataDir, "postgres"))).toBe(false);
  });
});
