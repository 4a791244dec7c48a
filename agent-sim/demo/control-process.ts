/**
 * Runs Control as a child process (`tsx control/main.ts`), exactly as `npm start` does, for
 * the demo and the benchmarks: waits until `/readyz` answers, and stops it with SIGTERM (or
 * SIGKILL on demand).
 *
 * The child is tsx's launcher; Control itself runs in the Node.js process the launcher
 * starts, and its embedded PostgreSQL (when `DATABASE_URL` is unset) in a process Control
 * starts. All three stay in this process's group, so a Ctrl-C at the terminal reaches them
 * as it reaches `npm start`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

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
  /** More command-line arguments of `control/main.ts` (e.g. `--workers 2`). */
  readonly args?: readonly string[];
}

/** A running Control child process. */
export interface ControlProcess {
  readonly child: ChildProcess;
  readonly adminUrl: string;
  readonly logFile: string;
  /**
   * SIGTERM to the launcher, which relays it to Control: Control drains, stops its embedded
   * PostgreSQL last and exits. Resolves with the exit code once the launcher (and so Control)
   * has exited; after `graceMs` it falls back to {@link ControlProcess.kill}.
   */
  stop(graceMs?: number): Promise<number | null>;
  /**
   * SIGKILL, at once, to the launcher and to the Node.js process running Control; resolves
   * once both have exited. As after a crash of Control, what Control started keeps running:
   * its embedded PostgreSQL is left to the next Control on the same data directory, which
   * adopts it.
   */
  kill(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, "..", "..");

/** Starts Control and resolves once it is ready. */
export async function startControlProcess(options: ControlProcessOptions): Promise<ControlProcess> {
  await mkdir(options.dataDir, { recursive: true });
  const args = [
    join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"),
    join(ROOT, "control", "main.ts"),
    ...(options.args ?? []),
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
  const kill = () => killControl(child, exited);
  if (!ready) {
    await kill();
    throw new Error(`Control did not become ready; see ${logFile}`);
  }
  return {
    child,
    adminUrl,
    logFile,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => {
        kill().catch(() => {
          // `exited` below still settles once the launcher is gone.
        });
      }, graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    kill,
  };
}

/**
 * SIGKILLs the launcher `child` and its children (the Node.js process running Control) and
 * waits until they are gone. A launcher that already exited took Control with it (tsx exits
 * only once its child has), so there is nothing left to kill then.
 */
async function killControl(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const launcher = child.pid;
  if (launcher === undefined || child.exitCode !== null || child.signalCode !== null) return;
  let control: number[] = [];
  let unlisted: unknown;
  try {
    control = (await processTable()).filter((p) => p.ppid === launcher).map((p) => p.pid);
  } catch (error) {
    unlisted = error;
  }
  for (const pid of [launcher, ...control]) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await exited;
  if (unlisted !== undefined) {
    throw new Error("killed tsx's launcher, but could not list Control's process with ps", {
      cause: unlisted,
    });
  }
  await waitUntilGone(control);
}

interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** `ps` state; a zombie (`Z…`) has exited and only waits to be reaped. */
  readonly stat: string;
}

/** Every process on the machine, as `ps` lists them (Linux and macOS alike). */
async function processTable(): Promise<ProcessEntry[]> {
  const { stdout } = await execFileAsync("ps", ["-A", "-o", "pid=,ppid=,stat="]);
  return stdout.split("\n").flatMap((line) => {
    const [pid, ppid, stat] = line.trim().split(/\s+/);
    return pid && ppid && stat ? [{ pid: Number(pid), ppid: Number(ppid), stat }] : [];
  });
}

/** Resolves once none of `pids` is running (a zombie counts as gone); rejects after 10 s. */
async function waitUntilGone(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const running = (await processTable()).filter(
      (p) => pids.includes(p.pid) && !p.stat.startsWith("Z"),
    );
    if (running.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`process ${running.map((p) => p.pid).join(", ")} survived SIGKILL`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
