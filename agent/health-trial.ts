/**
 * The health checks of a version on trial: the new version, started by the supervisor after
 * an upgrade, runs its release's signed checks before it opens a stream to Control, so a
 * node that does not work never reports the target. On a failure it records why in the
 * state and exits with {@link HEALTH_CHECK_FAILED_EXIT_CODE}; the supervisor then reverts it
 * through its revert path and the previous version reports FAILED `health_check_failed`.
 */
import { type AgentState, saveState } from "./agent-state.js";
import type { AgentLog } from "./core/log.js";
import { runHealthChecks } from "./health-checks.js";
import type { InstallPaths } from "./install-dir.js";

/** The exit code with which a version on trial says it failed its health checks. */
export const HEALTH_CHECK_FAILED_EXIT_CODE = 76;

/** The Agent code of an upgrade reverted for a failed health check. */
export const HEALTH_CHECK_FAILED = "health_check_failed";

/**
 * Runs the checks when `version` is an upgrade on trial that carries some; resolves true when
 * the Agent may connect (no checks, or all passed), false after recording the failure
 * durably in `state.healthFailure`.
 */
export async function passTrialHealth(
  paths: InstallPaths,
  state: AgentState,
  version: string,
  log: AgentLog,
  signal: AbortSignal,
): Promise<boolean> {
  const trial = state.switch;
  if (trial?.kind !== "upgrade" || trial.to !== version || trial.health === undefined) return true;
  log.info(
    {
      version,
      checks: trial.health.checks.map((c) => c.name),
      periodSeconds: trial.health.periodSeconds,
    },
    "running the release's health checks",
  );
  const verdict = await runHealthChecks(trial.health, signal);
  if (verdict.ok) {
    log.info({ version }, "the health checks passed");
    return true;
  }
  log.warn({ version, reason: verdict.message }, "a health check failed");
  state.healthFailure = { opId: trial.opId, message: verdict.message };
  await saveState(paths, state);
  return false;
}
