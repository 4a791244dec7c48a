/**
 * Runs Control as a child process (`tsx control/main.ts`), exactly as `npm start` does, for
 * the demo and the benchmarks: waits until `/readyz` answers, and stops it with SIGTERM (or
 * SIGKILL on demand).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Options of {@link startControlProcess}. */
export interface ControlProcessOptions {
  readonly dataDir: string;
  readonly agentAddr: string;
  readonly adminAddr: string;
  /** Written to `<dataDir>/config.json` and passed with `--config`. */
  readonly config?: Record<string, unknown>;
  readonly env?: Readonly<Record<string, string>>;
  /** Where Control's stdout/stderr go (default `<dataDir>/control.log`). */
  readonly logFile?: string;
  readonly readyTimeoutMs?: number;
}

/** A running Control child process. */
export interface ControlProcess {
  readonly child: ChildProcess;
  readonly adminUrl: string;
  readonly logFile: string;
  /** SIGTERM, then wait for exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL at once and wait for exit. */
  kill(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, "..", "..");

/** Starts Control and resolves once it is ready. */
export async function startControlProcess(options: ControlProcessOptions): Promise<ControlProcess> {
  await mkdir(options.dataDir, { recursive: true });
  const args = [
    join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"),
    join(ROOT, "control", "main.ts"),
  ];
  if (options.config) {
    const configFile = join(options.dataDir, "config.json");
    await writeFile(configFile, `${JSON.stringify(options.config, null, 2)}\n`);
    args.push("--config", configFile);
  }
  const logFile = options.logFile ?? join(options.dataDir, "control.log");
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      AGENT_CONTROL_DATA_DIR: options.dataDir,
      AGENT_CONTROL_AGENT_ADDR: options.agentAddr,
      AGENT_CONTROL_ADMIN_ADDR: options.adminAddr,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolveExit) =>
    child.once("exit", (code) => resolveExit(code)),
  );
  const adminUrl = `http://${options.adminAddr}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let ready = false;
  while (!ready && Date.now() < deadline && child.exitCode === null) {
    ready = await fetch(`${adminUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await new Promise((r) => setTimeout(r, 200));
  }
  if (!ready) {
    child.kill("SIGKILL");
    throw new Error(`Control did not become ready; see ${logFile}`);
  }
  return {
    child,
    adminUrl,
    logFile,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}
