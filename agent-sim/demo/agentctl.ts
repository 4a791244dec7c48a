/** Runs the real `agentctl` binary for the demo, echoing the command and its output. */
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

/**
 * Runs `agentctl args…` with `env` added; echoes `$ npx agentctl …` and the output unless
 * `quiet`. Resolves with the exit code and output (never rejects on a non-zero exit).
 */
export async function agentctl(
  args: readonly string[],
  options: { env?: Readonly<Record<string, string>>; quiet?: boolean; inherit?: boolean } = {},
): Promise<AgentctlResult> {
  if (!options.quiet) process.stdout.write(`\n$ npx agentctl ${args.join(" ")}\n`);
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: options.inherit ? ["ignore", "inherit", "inherit"] : ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number>((resolveCode) =>
    child.once("close", (c) => resolveCode(c ?? 1)),
  );
  if (!options.quiet && !options.inherit) process.stdout.write(stdout + stderr);
  return { code, stdout, stderr };
}
