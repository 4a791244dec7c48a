/**
 * Real Agents for end-to-end tests: artifacts built by `npm run agent:build`, supervisors
 * started from them as their own process groups (so a SIGKILL takes the supervisor and the
 * Agent it runs), and `agent status` read back as JSON.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");

/** Builds the artifact of `version` with `npm run agent:build`'s program; returns its bytes. */
export async function buildAgent(version: string, out: string): Promise<Uint8Array> {
  await run(TSX, [join(ROOT, "agent/build-main.ts"), "--version", version, "--out", out], {
    cwd: ROOT,
  });
  return await readFile(out);
}

/** A running supervisor (and the Agent it runs). */
export interface RunningAgent {
  readonly process: ChildProcess;
  /** Everything written to stderr so far (JSON log lines). */
  readonly logs: () => string;
  /** SIGKILLs the supervisor and its Agent at once (their process group). */
  kill(): Promise<void>;
  /** SIGTERMs the supervisor and waits for it to exit. */
  stop(): Promise<number | null>;
}

/** Starts `node artifact run --install-dir dir …args` in its own process group. */
export function startAgent(artifact: string, dir: string, args: readonly string[]): RunningAgent {
  const child = spawn(process.execPath, [artifact, "run", "--install-dir", dir, ...args], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let logs = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    logs += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    process: child,
    logs: () => logs,
    async kill() {
      try {
        process.kill(-(child.pid ?? 0), "SIGKILL");
      } catch {
        // already gone
      }
      await exited;
      // The Agent of a killed group may still be on its way out.
      await new Promise((resolve) => setTimeout(resolve, 100));
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      return await exited;
    },
  };
}

/** What `agent status --install-dir dir` prints. */
export interface StatusJson {
  current: string | null;
  previous: string | null;
  confirmedSequence: string;
  pending: { kind: string; to: string; from: string } | null;
  nodeId: string | null;
  installed: string[];
}

/** Runs `node artifact status --install-dir dir` and parses its JSON. */
export async function agentStatus(artifact: string, dir: string): Promise<StatusJson> {
  const { stdout } = await run(process.execPath, [artifact, "status", "--install-dir", dir]);
  return JSON.parse(stdout) as StatusJson;
}

/** Polls `check` every 100 ms until it returns a value; throws `what` after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls `agent status` until no switch is pending; returns that status. */
export function settledStatus(artifact: string, dir: string): Promise<StatusJson> {
  return eventually(async () => {
    const s = await agentStatus(artifact, dir);
    return s.pending === null ? s : undefined;
  }, "no pending switch");
}
