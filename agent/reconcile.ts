/**
 * What the supervisor makes of the install directory before it starts the Agent: the
 * `current` link is the truth about what runs, and a switch recorded in the state is
 * either settled (the link moved), still on trial (an upgrade whose new version has not
 * been welcomed yet), or undone (the process died before the link moved). Pure: it changes
 * the state object it is given and says what it did.
 */
import { compareSemver, isSemver } from "../control/shared/release/index.js";
import { OperationPhase } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentState, PendingSwitch } from "./agent-state.js";
import { rememberReport, reportOf } from "./core/durable-state.js";

/** The outcome of reconciling the state with the link. */
export interface Reconciled {
  /** The state was changed and must be saved. */
  readonly changed: boolean;
  /** An upgrade on trial: its version must be welcomed within the deadline. */
  readonly trial: PendingSwitch | undefined;
}

/** Brings `state` in line with `current` (the version the link points at). */
export function reconcile(state: AgentState, current: string): Reconciled {
  let changed = false;
  let trial: PendingSwitch | undefined;
  const pending = state.switch;
  if (pending !== undefined) {
    if (current === pending.to && pending.kind === "upgrade") {
      trial = pending;
    } else if (current === pending.to) {
      delete state.switch;
      changed = true;
    } else {
      undo(
        state,
        pending,
        current,
        "interrupted",
        "the agent stopped before the switch took place",
      );
      changed = true;
    }
  }
  if (state.version !== current) {
    state.version = current;
    changed = true;
  }
  if (state.previousVersion === current) {
    state.previousVersion = "";
    changed = true;
  }
  return { changed, trial };
}

/**
 * Records that the upgrade on trial was reverted to `pending.from`, with the reason: the
 * versions return to what they were before it, and its operation is reported FAILED
 * (`code`) once the Agent is welcomed again.
 */
export function revertTrial(
  state: AgentState,
  pending: PendingSwitch,
  code: string,
  message: string,
): void {
  undo(state, pending, pending.from, code, message);
}

function undo(
  state: AgentState,
  pending: PendingSwitch,
  current: string,
  code: string,
  message: string,
): void {
  delete state.switch;
  state.version = current;
  state.previousVersion = pending.previousBefore === current ? "" : pending.previousBefore;
  if (state.pendingReinstate === pending.opId) delete state.pendingReinstate;
  const report = reportOf(state, pending.opId);
  if (report === undefined || report.phase !== OperationPhase.FAILED) {
    rememberReport(state, pending.opId, {
      phase: OperationPhase.FAILED,
      version: current,
      code,
      message,
    });
  }
  state.pendingReport = pending.opId;
}

/** The failure code of a rollback whose version is not installed (nothing to return to). */
export const PREVIOUS_VERSION_MISSING = "previous_version_missing";

/**
 * The version to run instead of `missing`, which `current` names but which has no artifact:
 * the one the switch to it came from, else the previous version, else the version the state
 * records, else the newest other installed one; undefined when none of them is installed.
 * Pure: `installed` lists the versions whose artifact is there.
 */
export function fallbackVersion(
  state: AgentState,
  missing: string,
  installed: readonly string[],
): string | undefined {
  const there = new Set(installed);
  const pending = state.switch;
  const preferred = [
    pending !== undefined && pending.to === missing ? pending.from : undefined,
    state.previousVersion,
    state.version,
  ];
  for (const version of preferred) {
    if (version !== undefined && version !== missing && there.has(version)) return version;
  }
  return [...there].filter((v) => v !== missing).sort(newestFirst)[0];
}

/**
 * Records that the supervisor moved `current` from `missing` (no artifact) to `to`, an
 * installed version: a switch to `missing` is undone and its operation reported FAILED, a
 * rollback whose REINSTATED was due is reported FAILED instead, and the previous version
 * is kept only when it is installed and is not `to`.
 */
export function fallBack(
  state: AgentState,
  missing: string,
  to: string,
  installed: readonly string[],
): void {
  const message = `${missing} is not installed (its artifact is missing); fell back to ${to}`;
  const pending = state.switch;
  if (pending !== undefined && pending.to === missing) {
    const code = pending.kind === "upgrade" ? "start_failed" : PREVIOUS_VERSION_MISSING;
    undo(state, pending, to, code, message);
  } else {
    delete state.switch;
    state.version = to;
  }
  const reinstate = state.pendingReinstate;
  if (reinstate !== undefined) {
    delete state.pendingReinstate;
    rememberReport(state, reinstate, {
      phase: OperationPhase.FAILED,
      version: to,
      code: PREVIOUS_VERSION_MISSING,
      message,
    });
    state.pendingReport = reinstate;
  }
  if (state.previousVersion === to || !installed.includes(state.previousVersion)) {
    state.previousVersion = "";
  }
}

function newestFirst(a: string, b: string): number {
  if (isSemver(a) && isSemver(b)) return compareSemver(b, a);
  return a < b ? 1 : a > b ? -1 : 0;
}
