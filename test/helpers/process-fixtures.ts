/**
 * Fixtures of the tests that run Control as child processes: a free loopback port, an
 * artifact server in the test process (so a killed Control never breaks a download), and a
 * Control child process that can be SIGKILLed and started again on the same data, and one
 * run to its exit ({@link runControl}).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { makeRelease } from "./releases.js";

/** A loopback TCP port free at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/**
 * `count` distinct loopback TCP ports free at the moment of asking: each is held until all are
 * chosen, so two never come out the same (one {@link freePort} after another may, once the first
 * was closed).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createNetServer());
  await Promise.all(
    servers.map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Serves `agent {version} for {platform}` at `/{version}/{platform}`, from the test process. */
export async function artifactServer(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const [, version, platform] = (req.url ?? "").split("/");
    res.end(`agent ${version} for ${platform}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, base: `http://127.0.0.1:${address.port}` };
}

/**
 * Makes a release of `version` at `sequence` for linux-amd64, signed by `key`, whose
 * artifacts are served at `urlBase` (by {@link artifactServer}), and registers it through
 * `control` without uploading them.
 */
export async function registerServedRelease(
  control: Pick<ControlChild, "client">,
  options: { version: string; sequence: number; key: ReleaseKeyPair; urlBase: string },
): Promise<void> {
  const release = await makeRelease({
    version: options.version,
    sequence: options.sequence,
    keys: [options.key],
    platforms: ["linux-amd64"],
    urlBase: options.urlBase,
  });
  await control.client(ReleaseService).registerRelease({ envelope: release.envelope });
}

/** Options of {@link startControlChild}. */
export interface ControlChildOptions {
  /** Label of the fresh test database Control runs on. */
  readonly database: string;
  /** Prefix of the temporary directory that holds the config file and is the data dir. */
  readonly dirPrefix: string;
  /** The operator token of the admin API. */
  readonly adminToken: string;
  /** Pins of the release keys Control trusts. */
  readonly pins: readonly string[];
  /**
   * The `timeouts` of the config, over `configGraceSeconds: 0` and `heartbeatSeconds: 1`.
   * The rest of the config is fixed: no minimum batch duration, a 200 ms worker and a 1 s
   * shutdown grace.
   */
  readonly timeouts: {
    readonly reconnectSeconds: number;
    readonly offlineAfterSeconds: number;
  };
  /** How long each start may take until `/readyz` answers before it fails. */
  readonly readyTimeoutMs: number;
}

/**
 * Control running as a child process (`node --import tsx control/main.ts --config …`, as
 * `npx tsx` does), with its stdout ignored and the last 4,000 characters of its stderr kept
 * for the errors of a failed start. Its log level is `TEST_LOG_LEVEL`, default `warn`.
 */
export interface ControlChild {
  /** `http://127.0.0.1:<port>` of the admin server; the same across restarts. */
  readonly adminUrl: string;
  /** `127.0.0.1:<port>` of the agent server; the same across restarts. */
  readonly agentAddress: string;
  /** A Connect client of `service` authenticated with the operator token. */
  client<S extends DescService>(service: S): Client<S>;
  /** SIGKILLs Control and waits for its exit; nothing when it is not running. */
  kill(): Promise<void>;
  /**
   * Starts Control again (SIGKILLing it first if it runs) on the same database, data dir,
   * config and ports, and waits until it is ready; throws with its stderr when it exits
   * first or is not ready within `readyTimeoutMs`.
   */
  restart(): Promise<void>;
  /** SIGKILLs Control, drops its database and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts Control as a child process on a fresh database, free loopback ports and a new
 * directory, and waits until it is ready. On a failed start it cleans up after itself and
 * throws; otherwise call `stop()` when done.
 */
export async function startControlChild(options: ControlChildOptions): Promise<ControlChild> {
  const database: TestDatabase = await createTestDatabase(options.database);
  const dir = await mkdtemp(join(tmpdir(), options.dirPrefix));
  const [agentPort, adminPort] = [await freePort(), await freePort()];
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const agentAddress = `127.0.0.1:${agentPort}`;
  const configFile = join(dir, "control.json");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    AGENT_CONTROL_ADMIN_TOKEN: options.adminToken,
    AGENT_CONTROL_AGENT_ADDR: agentAddress,
    AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
    AGENT_CONTROL_DATA_DIR: dir,
    AGENT_CONTROL_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
  };
  let child: ChildProcess | undefined;
  let stderr = "";

  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
    child = undefined;
  };

  const start = async () => {
    stderr = "";
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "control/main.ts", "--config", configFile],
      { cwd: process.cwd(), env, stdio: ["ignore", "ignore", "pipe"] },
    );
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child = proc;
    const deadline = Date.now() + options.readyTimeoutMs;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`Control exited at start:\n${stderr}`);
      const ok = await fetch(`${adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) {
        throw new Error(`Control not ready in ${options.readyTimeoutMs / 1000} s:\n${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stop = async () => {
    await kill();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await writeFile(
      configFile,
      JSON.stringify({
        release: { pins: options.pins },
        policy: { minBatchDurationSeconds: 0 },
        timeouts: { configGraceSeconds: 0, heartbeatSeconds: 1, ...options.timeouts },
        worker: { intervalMs: 200 },
        limits: { shutdownGraceSeconds: 1 },
        // Simulated fleets report the labels their campaigns select on.
        enrollment: { agentReportedLabels: ["*"] },
      }),
    );
    await start();
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    adminUrl,
    agentAddress,
    client<S extends DescService>(service: S): Client<S> {
      const bearer: Interceptor = (next) => (req) => {
        req.header.set("authorization", `Bearer ${options.adminToken}`);
        return next(req);
      };
      return createClient(
        service,
        createConnectTransport({ baseUrl: adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
      );
    },
    kill,
    async restart() {
      await kill();
      await start();
    },
    stop,
  };
}

/** What a Control process run to its exit printed, and its exit code (null: killed). */
export interface ControlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node --import tsx control/main.ts args…` to its exit with `env` over an environment
 * of `PATH` alone; SIGKILLed after 60 s.
 */
export async function runControl(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<ControlRun> {
  const child = spawn(process.execPath, ["--import", "tsx", "control/main.ts", ...args], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
