/**
 * A real Control for the benchmark, started exactly as `npm start` (through the demo's
 * {@link startControlProcess}) on its own embedded PostgreSQL, with the bench-only GC hook
 * loaded through NODE_OPTIONS, a join token made by the real `agentctl`, and the URL of
 * its database for the raw-SQL baselines.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { embeddedDatabaseUrl, freePort } from "../../control/db/embedded-postgres.js";
import { agentctl } from "../demo/agentctl.js";
import { type ControlProcess, startControlProcess } from "../demo/control-process.js";
import { hookPid } from "./proc-stats.js";
import { gcHookEnv } from "./processes.js";

/** A running Control under measurement. */
export interface BenchControl {
  readonly dir: string;
  readonly agentAddr: string;
  readonly adminAddr: string;
  /** Environment for `agentctl` against this Control. */
  readonly ctlEnv: Readonly<Record<string, string>>;
  /** The pid of the Node.js process running Control (not tsx's launcher). */
  pid(): number;
  joinToken(): Promise<string>;
  /** `postgres://` URL of Control's embedded database. */
  databaseUrl(): Promise<string>;
  /** SIGKILL of the Control process (its PostgreSQL keeps running). */
  kill(): Promise<void>;
  /**
   * Starts Control again on the same data directory and ports, with `config` (the config
   * file's JSON) in place of the one it was started with when given.
   */
  restart(config?: Record<string, unknown>): Promise<void>;
  /** SIGTERM (drain), which also stops the embedded PostgreSQL. */
  stop(): Promise<void>;
}

/**
 * Starts Control in `dir` with `config` (the config file's JSON), `extraEnv` (e.g. release
 * pins) and `args` (e.g. `--workers 2`; the pid is then the cluster's primary's, and each
 * worker's GC hook is named `control-w<id>`).
 */
export async function startBenchControl(
  dir: string,
  config: Record<string, unknown>,
  extraEnv: Readonly<Record<string, string>> = {},
  args: readonly string[] = [],
): Promise<BenchControl> {
  const agentAddr = `127.0.0.1:${await freePort()}`;
  const adminAddr = `127.0.0.1:${await freePort()}`;
  const env = {
    ...gcHookEnv(dir, "control"),
    AGENT_CONTROL_ADMIN_TOKEN: "bench-operator-token",
    ...extraEnv,
  };
  const ctlEnv = {
    AGENTCTL_SERVER: `http://${adminAddr}`,
    AGENTCTL_TOKEN: "bench-operator-token",
    AGENT_CONTROL_DATA_DIR: dir,
  };
  const launch = async (
    config: Record<string, unknown>,
  ): Promise<{ proc: ControlProcess; pid: number }> => {
    await rm(join(dir, "control.pid"), { force: true });
    const proc = await startControlProcess({
      dataDir: dir,
      agentAddr,
      adminAddr,
      config,
      env,
      readyTimeoutMs: 120_000,
      args,
    });
    return { proc, pid: await hookPid(dir, "control") };
  };
  let current = await launch(config);
  let lastConfig = config;
  let token: string | undefined;
  return {
    dir,
    agentAddr,
    adminAddr,
    ctlEnv,
    pid: () => current.pid,
    async joinToken() {
      if (token) return token;
      const made = await agentctl(["token", "create", "--ttl", "24h", "--json"], {
        env: ctlEnv,
        quiet: true,
      });
      if (made.code !== 0) throw new Error(`agentctl token create failed: ${made.stderr}`);
      token = (JSON.parse(made.stdout) as { secret: string }).secret;
      return token;
    },
    async databaseUrl() {
      // The embedded server's port and its superuser's password, from the data dir.
      return await embeddedDatabaseUrl(dir);
    },
    async kill() {
      try {
        process.kill(current.pid, "SIGKILL");
      } catch {
        // already gone
      }
      await current.proc.kill();
    },
    async restart(next?: Record<string, unknown>) {
      if (next !== undefined) lastConfig = next;
      current = await launch(lastConfig);
    },
    async stop() {
      await current.proc.stop(30_000);
      // tsx's launcher forwards SIGTERM; make sure the server itself is gone.
      try {
        process.kill(current.pid, "SIGKILL");
      } catch {
        // exited normally
      }
      await stopLeftoverPostgres(dir);
    },
  };
}

/** Stops an embedded PostgreSQL left running under `dir` (after a failed run). */
async function stopLeftoverPostgres(dir: string): Promise<void> {
  const text = await readFile(join(dir, "postgres", "postmaster.pid"), "utf8").catch(() => "");
  const pid = Number.parseInt(text.split("\n")[0] ?? "", 10);
  if (!(pid > 0)) return;
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let waited = 0; waited < 20_000; waited += 200) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
