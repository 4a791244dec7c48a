/**
 * The real `agentctl` binary for end-to-end tests, run in an environment the test states
 * in full, so nothing of the developer's shell (a token, a data dir) leaks into a result.
 */
import { type AgentctlResult, runAgentctl } from "../../agent-sim/demo/agentctl.js";

export type { AgentctlResult };

/** A run that outlives this is killed; its result then carries exit code 1. */
const TIMEOUT_MS = 90_000;

/**
 * Runs `agentctl args…` with only `env` plus `PATH` and `NO_COLOR=1` (so output is never
 * coloured) and stdin closed. Resolves with the exit code and the whole stdout and stderr;
 * never rejects on a non-zero exit.
 */
export function agentctl(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<AgentctlResult> {
  return runAgentctl(args, {
    env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
    timeoutMs: TIMEOUT_MS,
  });
}
