/**
 * Runs the real `agentctl` binary: {@link runAgentctl} is the one way the demo, the bench
 * and the end-to-end tests start it; {@link agentctl} is the demo's form, which also echoes
 * the command and its output.
 */
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "cli", "bin", "agentctl.js");

/** The outcome of one agentctl run. */
export interface AgentctlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** How {@link runAgentctl} starts the binary. */
export interface RunAgentctlOptions {
  /** The whole environment of the child: nothing of this process's is added. */
  readonly env: NodeJS.ProcessEnv;
  /** Passes the output straight to this process's stdout/stderr instead of collecting it. */
  readonly inherit?: boolean;
  /** Kills the run (SIGTERM) once it has taken this long. */
  readonly timeoutMs?: number;
  /** The directory it runs in (default: the repository root). */
  readonly cwd?: string;
}

/**
 * Runs `agentctl args…` from the repository root (or `cwd`) with stdin closed. Resolves with the exit
 * code (1 when the child died of a signal, a timeout included) and the collected output
 * (empty when `inherit`); never rejects on a non-zero exit.
 */
export async function runAgentctl(
  args: readonly string[],
  options: RunAgentctlOptions,
): Promise<AgentctlResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdio: options.inherit ? ["ignore", "inherit", "inherit"] : ["ignore", "pipe", "pipe"],
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
  let stdout = "";
  let stderr = "";
  // Decoded as a stream, so a character split across two chunks stays whole.
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number>((resolveCode) =>
    child.once("close", (c) => resolveCode(c ?? 1)),
  );
  return { code, stdout, stderr };
}

/**
 * Runs `agentctl args…` with `env` added to this process's environment; echoes
 * `$ npx agentctl …` and the output unless `quiet`. Resolves with the exit code and output
 * (never rejects on a non-zero exit).
 */
export async function agentctl(
  args: readonly string[],
  options: { env?: Readonly<Record<string, string>>; quiet?: boolean; inherit?: boolean } = {},
): Promise<AgentctlResult> {
  if (!options.quiet) process.stdout.write(`\n$ npx agentctl ${args.join(" ")}\n`);
  const result = await runAgentctl(args, {
    env: { ...process.env, ...options.env },
    ...(options.inherit !== undefined ? { inherit: options.inherit } : {}),
  });
  if (!options.quiet && !options.inherit) process.stdout.write(result.stdout + result.stderr);
  return result;
}
