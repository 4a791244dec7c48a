/**
 * Why the supervisor reverts a version on trial: the code and the reason its operation is
 * reported FAILED with, from how the version's run ended (a failed health check, a crash, a
 * start that was impossible, the start deadline).
 */
import type { AgentState, PendingSwitch } from "./agent-state.js";
import { HEALTH_CHECK_FAILED, HEALTH_CHECK_FAILED_EXIT_CODE } from "./health-trial.js";

/** How one child run ended. */
export interface ChildEnd {
  readonly welcomed: boolean;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The start deadline passed before a Welcome (the child was killed). */
  readonly deadline: boolean;
  readonly ranMs: number;
  /** The child could not be started at all (the spawn error). */
  readonly startError?: string;
}

/** The code and reason of reverting `trial`, whose run ended with `end` before a Welcome. */
export function whyReverted(
  trial: PendingSwitch,
  end: ChildEnd,
  state: AgentState,
  deadlineMs: number,
): { code: string; reason: string } {
  const health = state.healthFailure;
  if (end.code === HEALTH_CHECK_FAILED_EXIT_CODE && health?.opId === trial.opId) {
    return { code: HEALTH_CHECK_FAILED, reason: `${trial.to} failed ${health.message}` };
  }
  const reason = end.deadline
    ? `${trial.to} was not welcomed by Control within ${deadlineMs} ms`
    : end.startError !== undefined
      ? `${trial.to} could not be started: ${end.startError}`
      : `${trial.to} exited (${end.signal ?? `code ${end.code}`}) before Control welcomed it`;
  return { code: "start_failed", reason };
}
