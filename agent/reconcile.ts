/**
 * What the supervisor makes of the install directory before it starts the Agent: the
 * `current` link is the truth about what runs, and a switch recorded in the state is
 * either settled (the link moved), still on trial (an upgrade whose new version has not
 * been welcomed yet), or undone (the process died before the link moved). Pure: it changes
 * the state object it is given and says what it did.
 */
import { OperationPhase } from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { AgentState, PendingSwitch } from "./agent-state.js";
import { rememberReport } from "./core/durable-state.js";

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
  const report = state.handled[pending.opId];
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
