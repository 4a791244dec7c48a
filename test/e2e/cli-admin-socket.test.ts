/**
 * Security review finding 6, end to end: agentctl sends the operator token it reads from a
 * Control's data directory (`<dataDir>/admin-token`, no `--token`, no `AGENTCTL_TOKEN`) only
 * over that Control's admin Unix socket, never to the admin TCP port, which any local user
 * may bind while Control is down. A real Control process (`control/main.ts`, one process and
 * `--workers 2`) and the real agentctl binary; the squatter is a plain TCP server on the
 * admin port that records every byte it is sent.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/process-fixtures.js";

/** A running `control/main.ts`, with its stderr kept for a failed start. */
interface ControlProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

function spawnControl(env: Readonly<Record<string, string>>, args: string[] = []): ControlProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts", ...args], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "", AGENT_CONTROL_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, exited, stderr: () => stderr };
}

async function waitReady(control: ControlProcess, adminUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (control.child.exitCode !== null) throw new Error(`Control exited:\n${control.stderr()}`);
    const ok = await fetch(`${adminUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Control not ready:\n${control.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A plain TCP server on the admin port: it records every connection and every byte. */
interface Squatter {
  readonly server: Server;
  connections: number;
  received: string;
}

async function squat(port: number): Promise<Squatter> {
  const squatter: Squatter = { server: createServer(), connections: 0, received: "" };
  squatter.server.on("connection", (socket) => {
    squatter.connections += 1;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      squatter.received += chunk;
    });
    socket.on("error", () => {});
    // Answers nothing; closes soon, so a client that did connect is not left hanging.
    setTimeout(() => socket.destroy(), 500);
  });
  await new Promise<void>((resolve, reject) => {
    squatter.server.once("error", reject);
    squatter.server.listen(port, "127.0.0.1", () => resolve());
  });
  return squatter;
}

const NO_CONTROL_LINE = /^agentctl: no Control is running with the data directory [^\n]+\n$/;

describe("agentctl's local token file goes only over Control's admin socket", {
  timeout: 180_000,
}, () => {
  let database: TestDatabase;
  let dataDir = "";
  let adminPort = 0;
  let adminUrl = "";
  let control: ControlProcess | undefined;
  let squatter: Squatter | undefined;
  const socketPath = () => join(dataDir, "control-run", "admin.sock");
  const controlEnv = () => ({
    DATABASE_URL: database.url,
    AGENT_CONTROL_DATA_DIR: dataDir,
    AGENT_CONTROL_AGENT_ADDR: "127.0.0.1:0",
    AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
  });
  /** agentctl with only the data dir's token file: no --token, no AGENTCTL_TOKEN. */
  const local = {
    get env() {
      return { AGENTCTL_SERVER: adminUrl, AGENT_CONTROL_DATA_DIR: dataDir };
    },
  };
  const running = () =>
    control !== undefined && control.child.exitCode === null && control.child.signalCode === null;
  const start = async () => {
    if (running()) return;
    control = spawnControl(controlEnv());
    await waitReady(control, adminUrl);
  };
  const stop = async (signal: NodeJS.Signals) => {
    if (control === undefined || !running()) return;
    control.child.kill(signal);
    await control.exited;
  };

  beforeAll(async () => {
    database = await createTestDatabase("admin_socket");
    dataDir = await mkdtemp(join(tmpdir(), "admin-socket-"));
    adminPort = await freePort();
    adminUrl = `http://127.0.0.1:${adminPort}`;
    await start();
  });

  afterEach(async () => {
    if (squatter) await new Promise((resolve) => squatter?.server.close(resolve));
    squatter = undefined;
  });

  afterAll(async () => {
    await stop("SIGKILL");
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("serves the admin API on <dataDir>/control-run/admin.sock: the socket 0600, its directory 0700", () => {
    expect(statSync(socketPath()).isSocket()).toBe(true);
    expect(statSync(socketPath()).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(socketPath())).mode & 0o777).toBe(0o700);
  });

  it("runs agentctl's commands against the running Control with the token file, over the socket", async () => {
    const listed = await agentctl(["node", "list", "--json"], local.env);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveProperty("nodes");
    const version = await agentctl(["version", "--json"], local.env);
    expect(version.code).toBe(0);
    expect(JSON.parse(version.stdout).server.url).toBe(`unix:${socketPath()}`);
    const created = await agentctl(["token", "create", "-q"], local.env);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
  });

  it("accepts --server unix:PATH, finding the data dir's token file by the socket's place", async () => {
    const result = await agentctl(
      ["node", "list", "--json", "--server", `unix:${socketPath()}`],
      {},
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("with Control stopped, a squatter on the admin port receives no token: agentctl says no Control runs there and sends nothing", async () => {
    await stop("SIGTERM");
    expect(existsSync(socketPath())).toBe(false);
    squatter = await squat(adminPort);
    const token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
    const result = await agentctl(["node", "list"], local.env);
    expect(squatter.received).not.toContain(token);
    expect(squatter.connections).toBe(0);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(NO_CONTROL_LINE);
    expect(result.stderr).toContain("--token or AGENTCTL_TOKEN");
    // The squatter does catch what is sent to the port: an explicit token still goes there.
    await agentctl(["node", "list", "--token", "explicit-token-0123456789", "--timeout", "2s"], {
      AGENTCTL_SERVER: adminUrl,
    });
    expect(squatter.received).toContain("explicit-token-0123456789");
  });

  it("after a SIGKILL leaves the socket file behind, sends nothing either; the next start replaces the stale socket", async () => {
    await start();
    await stop("SIGKILL");
    expect(statSync(socketPath()).isSocket()).toBe(true);
    squatter = await squat(adminPort);
    const result = await agentctl(["node", "list"], local.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(NO_CONTROL_LINE);
    expect(squatter.connections).toBe(0);
    await new Promise((resolve) => squatter?.server.close(resolve));
    squatter = undefined;
    await start();
    const listed = await agentctl(["node", "list", "--json"], local.env);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
  });

  it("refuses to start beside a Control that answers on the same socket", async () => {
    const second = spawnControl({ ...controlEnv(), AGENT_CONTROL_ADMIN_ADDR: "127.0.0.1:0" });
    const guard = setTimeout(() => second.child.kill("SIGKILL"), 60_000);
    const code = await second.exited.finally(() => clearTimeout(guard));
    expect(code, second.stderr()).toBe(2);
    expect(second.stderr()).toContain(`adminSocket: another Control answers on ${socketPath()}`);
    // The first still serves there.
    const listed = await agentctl(["node", "list", "--json"], local.env);
    expect(listed.code).toBe(0);
  });
});

describe("the admin socket with --workers 2", { timeout: 180_000 }, () => {
  let database: TestDatabase;
  let dataDir = "";
  let control: ControlProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase("admin_socket_workers");
    dataDir = await mkdtemp(join(tmpdir(), "admin-socket-w-"));
  });

  afterAll(async () => {
    if (control && control.child.exitCode === null) {
      control.child.kill("SIGTERM");
      await control.exited;
    }
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("is served by every worker, and removed when the primary stops", async () => {
    const adminUrl = `http://127.0.0.1:${await freePort()}`;
    control = spawnControl(
      {
        DATABASE_URL: database.url,
        AGENT_CONTROL_DATA_DIR: dataDir,
        AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${await freePort()}`,
        AGENT_CONTROL_ADMIN_ADDR: adminUrl.slice("http://".length),
      },
      ["--workers", "2"],
    );
    await waitReady(control, adminUrl);
    const socket = join(dataDir, "control-run", "admin.sock");
    const env = { AGENTCTL_SERVER: adminUrl, AGENT_CONTROL_DATA_DIR: dataDir };
    const instances = new Set<string>();
    // Both workers ready: the TCP port answers from either; the socket must too.
    for (let i = 0; i < 30 && instances.size < 2; i++) {
      const version = await agentctl(["version", "--json"], env);
      expect(version.stderr).toBe("");
      expect(version.code).toBe(0);
      const server = JSON.parse(version.stdout).server as { url: string; instanceId: string };
      expect(server.url).toBe(`unix:${socket}`);
      instances.add(server.instanceId);
    }
    expect(instances.size).toBe(2);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    control.child.kill("SIGTERM");
    expect(await control.exited).toBe(0);
    expect(existsSync(socket)).toBe(false);
  });
});
