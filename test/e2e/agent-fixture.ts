/**
 * Real Agents for end-to-end tests: artifacts built by `npm run agent:build` (ES modules run
 * by this Node.js, or single executables run directly), supervisors started from them as
 * their own process groups (so a SIGKILL takes the supervisor and the Agent it runs), and
 * `agent status` read back as JSON.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");

/**
 * Builds the artifact of `version` with `npm run agent:build`'s program (with
 * `--executable` when `executable`) at `out`; returns its bytes. Within one test run (the
 * global setup's `AGENT_CONTROL_TEST_BUILDS`), a version built alike before is copied from
 * that run's builds instead of built again.
 */
export async function buildAgent(
  version: string,
  out: string,
  executable = false,
): Promise<Uint8Array> {
  const builds = process.env.AGENT_CONTROL_TEST_BUILDS;
  const cached = builds
    ? join(builds, `agent-${version}${executable ? "-executable" : ".mjs"}`)
    : undefined;
  if (cached && existsSync(cached)) {
    await copyFile(cached, out); // with the file's mode
    return await readFile(out);
  }
  const args = [join(ROOT, "agent/build-main.ts"), "--version", version, "--out", out];
  await run(TSX, executable ? [...args, "--executable"] : args, { cwd: ROOT });
  if (cached) {
    // Another test file may be building the same version now: each writes a file of its own
    // and renames it in, so the cache never holds a half-written artifact.
    const partial = `${cached}.${process.pid}.${Date.now()}`;
    await copyFile(out, partial);
    await rename(partial, cached);
  }
  return await readFile(out);
}

/** The program and leading arguments that run `artifact`: `.mjs` with this Node.js, else directly. */
function programOf(artifact: string): [string, string[]] {
  return artifact.endsWith(".mjs") ? [process.execPath, [artifact]] : [artifact, []];
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

/**
 * Starts `artifact run --install-dir dir …args` (an `.mjs` with this Node.js) in its own
 * process group, with `env` as its whole environment when given.
 */
export function startAgent(
  artifact: string,
  dir: string,
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
): RunningAgent {
  const [file, lead] = programOf(artifact);
  const child = spawn(file, [...lead, "run", "--install-dir", dir, ...args], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    ...(env !== undefined ? { env } : {}),
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

/** Runs `artifact status --install-dir dir` (an `.mjs` with this Node.js) and parses its JSON. */
export async function agentStatus(
  artifact: string,
  dir: string,
  env?: NodeJS.ProcessEnv,
): Promise<StatusJson> {
  const [file, lead] = programOf(artifact);
  const { stdout } = await run(file, [...lead, "status", "--install-dir", dir], {
    ...(env !== undefined ? { env } : {}),
  });
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
