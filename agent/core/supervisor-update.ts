/**
 * The rules of a supervisor update, pure: no files, no processes, no clock.
 *
 * A release whose signed manifest says it carries its supervisor is installed as any
 * upgrade (its version on trial); the supervisor running then does not run the new Agent
 * itself but starts the release's artifact as a supervisor on trial, which runs it. Only
 * when that supervisor has brought the Agent back (welcomed by Control) within the start
 * deadline does the `supervisor` pointer move to it; otherwise it is stopped, the pointer
 * never moved, the Agent is reverted as for any failed upgrade and the operation fails
 * `supervisor_failed`. The supervisor's own record (`supervisor.json`, written by
 * supervisors only) says which trial is under way, so a power cut at any step is resumed:
 * {@link nextSupervisorStep} reads the pointer, the record and the Agent's switch.
 */

/** The failure code of an operation whose release's supervisor did not bring the Agent back. */
export const SUPERVISOR_FAILED = "supervisor_failed";

/**
 * The steps of an update, in order, as the running supervisor passes them (a test names
 * one to be killed at: `AGENT_TEST_KILL_AT`). `trial-recorded`: the record names the trial;
 * `supervisor-installed`: the new supervisor's files are written; `trial-started`: it runs,
 * the Agent not welcomed yet; `welcomed`: the Agent is back, the pointer not moved;
 * `pointer-moved`: the pointer names the new supervisor, the record still the trial;
 * `trial-settled`: the record says it is done, the new supervisor not yet the only one.
 */
export const SUPERVISOR_UPDATE_STEPS = [
  "trial-recorded",
  "supervisor-installed",
  "trial-started",
  "welcomed",
  "pointer-moved",
  "trial-settled",
] as const;

/** One step of {@link SUPERVISOR_UPDATE_STEPS}. */
export type SupervisorUpdateStep = (typeof SUPERVISOR_UPDATE_STEPS)[number];

/** A supervisor being tried: the release's version, its operation, and the pointer before it. */
export interface SupervisorTrial {
  readonly version: string;
  readonly opId: string;
  /** The supervisor the pointer named when the trial began ("": the one installed by hand). */
  readonly from: string;
}

/** The last supervisor update that failed. */
export interface SupervisorFailure {
  readonly version: string;
  readonly opId: string;
  readonly code: string;
  readonly message: string;
}

/** What supervisors record in `supervisor.json` (the Agent never writes it). */
export interface SupervisorRecord {
  /** The update under way, if any. */
  readonly trial?: SupervisorTrial;
  /** The supervisor the pointer named before its last move ("": the one installed by hand). */
  readonly previous?: string;
  /** The last update that failed (cleared by one that succeeds). */
  readonly failure?: SupervisorFailure;
}

/** The part of the Agent's switch in progress that matters here. */
export interface SwitchView {
  readonly kind: "upgrade" | "rollback";
  readonly opId: string;
  readonly from: string;
  readonly to: string;
  /** The verified release carries its supervisor. */
  readonly supervisor?: boolean;
}

/** What a supervisor finds in the install directory before it runs the Agent. */
export interface SupervisorView {
  /** The supervisor the pointer names ("": none, the one installed by hand runs). */
  readonly inUse: string;
  readonly record: SupervisorRecord;
  /** The version `current` points at. */
  readonly current: string;
  /** The Agent's switch in progress (state.json), after reconciling it with `current`. */
  readonly pending: SwitchView | undefined;
}

/** What to do next. */
export type SupervisorStep =
  /** Run the Agent as usual. */
  | { readonly kind: "run" }
  /** The pointer already names the trial's supervisor: record it done, then run the Agent. */
  | { readonly kind: "settle"; readonly trial: SupervisorTrial }
  /**
   * Start the trial's supervisor, which runs the Agent; `revertsAgent`: its failure also
   * reverts the Agent's upgrade on trial (else the Agent's switch was already settled and
   * only the supervisor update is given up).
   */
  | { readonly kind: "trial"; readonly trial: SupervisorTrial; readonly revertsAgent: boolean }
  /** The recorded trial's version no longer runs (its upgrade was undone): forget the trial. */
  | { readonly kind: "drop"; readonly trial: SupervisorTrial };

/**
 * The next step of a supervisor that is not itself on trial. Level-based: the same view
 * gives the same step, so a supervisor killed at any step and started again resumes.
 */
export function nextSupervisorStep(view: SupervisorView): SupervisorStep {
  const { inUse, record, current, pending } = view;
  const recorded = record.trial;
  if (recorded !== undefined && recorded.version === inUse) {
    return { kind: "settle", trial: recorded };
  }
  if (
    pending !== undefined &&
    pending.kind === "upgrade" &&
    pending.supervisor === true &&
    pending.to === current &&
    pending.to !== inUse
  ) {
    const trial =
      recorded !== undefined && recorded.version === pending.to && recorded.opId === pending.opId
        ? recorded
        : { version: pending.to, opId: pending.opId, from: inUse };
    return { kind: "trial", trial, revertsAgent: true };
  }
  if (recorded !== undefined) {
    if (recorded.version === current)
      return { kind: "trial", trial: recorded, revertsAgent: false };
    return { kind: "drop", trial: recorded };
  }
  return { kind: "run" };
}

/** The record once `trial`'s supervisor is the one in use: it keeps the one before it. */
export function settledRecord(_record: SupervisorRecord, trial: SupervisorTrial): SupervisorRecord {
  return { previous: trial.from };
}

/** The record once `trial` failed: the previous supervisor is kept, the failure recorded. */
export function failedRecord(
  record: SupervisorRecord,
  trial: SupervisorTrial,
  code: string,
  message: string,
): SupervisorRecord {
  return {
    ...(record.previous === undefined ? {} : { previous: record.previous }),
    failure: { version: trial.version, opId: trial.opId, code, message },
  };
}

/** The record without its trial (dropped), everything else kept. */
export function withoutTrial(record: SupervisorRecord): SupervisorRecord {
  const { trial: _dropped, ...rest } = record;
  return rest;
}

/**
 * The installed supervisors that may be deleted: never the one in use, the previous one,
 * nor one on trial; nothing whose name is not a plain directory name.
 */
export function supervisorsToRemove(
  installed: readonly string[],
  inUse: string,
  record: SupervisorRecord,
): string[] {
  const keep = new Set([inUse, record.previous ?? "", record.trial?.version ?? ""]);
  return installed.filter(
    (name) =>
      name !== "" && name !== "." && name !== ".." && !name.includes("/") && !keep.has(name),
  );
}

/** How a supervisor on trial ended without bringing the Agent back. */
export interface TrialEnd {
  /** The deadline passed (the supervisor was stopped). */
  readonly deadline: boolean;
  readonly code: number | null;
  readonly signal: string | null;
  /** It could not be started at all. */
  readonly startError?: string;
}

/** The code and message of a supervisor trial of `version` that ended with `end`. */
export function supervisorTrialFailure(
  version: string,
  end: TrialEnd,
  deadlineMs: number,
): { code: string; message: string } {
  const who = `the supervisor of ${version}`;
  const message = end.deadline
    ? `${who} did not bring the Agent back (welcomed by Control) within ${deadlineMs} ms`
    : end.startError !== undefined
      ? `${who} could not be started: ${end.startError}`
      : `${who} exited (${end.signal ?? `code ${end.code}`}) before the Agent was welcomed by Control`;
  return { code: SUPERVISOR_FAILED, message };
}
