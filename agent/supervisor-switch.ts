/**
 * The supervisor's side of a supervisor update, between two runs of the Agent: it reads the
 * pointer, its record and the Agent's switch, asks the pure rules what to do
 * ({@link nextSupervisorStep}) and does it. A trial goes: the record names it (durably),
 * the release's artifact is copied to `supervisors/<v>/`, the new supervisor is started on
 * trial and runs the Agent; once the Agent is welcomed the pointer moves to it, the record
 * says so, the supervisor on trial is stopped and this one hands over (the launcher starts
 * the supervisor the pointer names). When the new supervisor exits, cannot be started or
 * does not bring the Agent back within the deadline, the pointer has not moved: the Agent's
 * upgrade is reverted as any failed upgrade, its operation fails `supervisor_failed`, the
 * failure is recorded and this supervisor goes on. Only the supervisor in use writes
 * state.json, and only while no Agent runs.
 */
import { healthBudgetMs } from "../control/shared/release/index.js";
import { type AgentState, loadState, saveState } from "./agent-state.js";
import type { AgentLog } from "./core/log.js";
import {
  failedRecord,
  nextSupervisorStep,
  type SupervisorRecord,
  type SupervisorTrial,
  type SupervisorUpdateStep,
  settledRecord,
  supervisorsToRemove,
  supervisorTrialFailure,
  withoutTrial,
} from "./core/supervisor-update.js";
import { type InstallPaths, removeVersion, switchCurrent } from "./install-dir.js";
import { revertTrial } from "./reconcile.js";
import {
  installedSupervisors,
  installSupervisor,
  moveSupervisorPointer,
  readSupervisorInUse,
  readSupervisorRecord,
  removeSupervisors,
  supervisorArtifact,
  writeSupervisorRecord,
} from "./supervisor-dir.js";
import { runSupervisorTrial } from "./supervisor-trial.js";

/** The time a new supervisor has on top of its Agent's start deadline to start itself. */
export const SUPERVISOR_START_GRACE_MS = 5_000;

/** What the supervisor loop does after {@link supervisorStep}. */
export type StepResult =
  /** Run the Agent now. */
  | "run"
  /** Look at the install directory again (a trial failed and was undone). */
  | "again"
  /** The pointer names a new supervisor: stop and let the launcher start it. */
  | "handover"
  /** The supervisor is stopping. */
  | "stopped";

/** What {@link supervisorStep} needs. */
export interface SwitchOptions {
  readonly paths: InstallPaths;
  /** `run …` with this supervisor's flags (the supervisor on trial gets the same). */
  readonly supervisorArgs: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly moduleRunner: string;
  readonly startDeadlineMs: number;
  readonly log: AgentLog;
  readonly signal: AbortSignal;
  /** Called as each step of an update is passed (a test kills the process group there). */
  readonly onStep?: (step: SupervisorUpdateStep) => void | Promise<void>;
  /**
   * Why an Agent that ended before its Welcome under the supervisor on trial failed: the
   * same code and reason a revert under this supervisor would give.
   */
  readonly agentFailure: (
    state: AgentState,
    end: { code: number | null; signal: string | null; deadline: boolean; startError?: string },
    deadlineMs: number,
  ) => { code: string; reason: string };
}

/**
 * Brings the supervisor update recorded in the install directory one step on, with
 * `state` (reconciled with `current`, saved) as it stands; see the file's TSDoc.
 */
export async function supervisorStep(
  options: SwitchOptions,
  state: AgentState,
  current: string,
): Promise<StepResult> {
  const { paths, log } = options;
  const record = await readSupervisorRecord(paths);
  if (record === undefined) {
    log.error({ file: paths.supervisorRecord }, "the supervisor record cannot be read; no update");
    return "run";
  }
  const inUse = await readSupervisorInUse(paths);
  const step = nextSupervisorStep({ inUse, record, current, pending: state.switch });
  switch (step.kind) {
    case "run":
      return "run";
    case "settle": {
      const next = settledRecord(record, step.trial);
      await writeSupervisorRecord(paths, next);
      await removeSupervisors(
        paths,
        supervisorsToRemove(await installedSupervisors(paths), inUse, next),
      );
      log.info(
        { supervisor: inUse, previous: step.trial.from },
        "the supervisor update is settled",
      );
      return "run";
    }
    case "drop": {
      const next = withoutTrial(record);
      await writeSupervisorRecord(paths, next);
      await removeSupervisors(
        paths,
        supervisorsToRemove(await installedSupervisors(paths), inUse, next),
      );
      log.warn(
        { version: step.trial.version },
        "dropped a supervisor update whose version no longer runs",
      );
      return "run";
    }
    case "trial":
      return tryNewSupervisor(options, record, step.trial, step.revertsAgent, state, inUse);
  }
}

async function tryNewSupervisor(
  options: SwitchOptions,
  record: SupervisorRecord,
  trial: SupervisorTrial,
  revertsAgent: boolean,
  state: AgentState,
  inUse: string,
): Promise<StepResult> {
  const { paths, log } = options;
  const onTrial: SupervisorRecord = { ...record, trial };
  await writeSupervisorRecord(paths, onTrial);
  await options.onStep?.("trial-recorded");
  const agentDeadlineMs =
    options.startDeadlineMs +
    (revertsAgent && state.switch?.kind === "upgrade" ? healthBudgetMs(state.switch.health) : 0);
  const deadlineMs = agentDeadlineMs + SUPERVISOR_START_GRACE_MS;
  let artifact = await supervisorArtifact(paths, trial.version);
  try {
    await installSupervisor(paths, trial.version);
    artifact = await supervisorArtifact(paths, trial.version);
  } catch (error) {
    log.error(
      { version: trial.version, err: String(error) },
      "could not install the new supervisor",
    );
  }
  await options.onStep?.("supervisor-installed");
  if (artifact === undefined) {
    return giveUp(options, onTrial, trial, revertsAgent, {
      code: "supervisor_failed",
      reason: `the supervisor of ${trial.version} could not be installed`,
    });
  }
  log.info(
    { version: trial.version, from: inUse || "installed by hand", deadlineMs },
    "starting the new supervisor on trial",
  );
  const running = runSupervisorTrial({
    artifact,
    args: options.supervisorArgs,
    env: options.env,
    moduleRunner: options.moduleRunner,
    deadlineMs,
    log,
    signal: options.signal,
  });
  await options.onStep?.("trial-started");
  const outcome = await running;
  switch (outcome.kind) {
    case "aborted":
      return "stopped";
    case "welcomed": {
      await options.onStep?.("welcomed");
      await moveSupervisorPointer(paths, trial.version);
      await options.onStep?.("pointer-moved");
      const next = settledRecord(onTrial, trial);
      await writeSupervisorRecord(paths, next);
      await options.onStep?.("trial-settled");
      log.info(
        { supervisor: trial.version, previous: trial.from || "installed by hand" },
        "the new supervisor brought the agent back; it is the supervisor in use",
      );
      await outcome.stop();
      await removeSupervisors(
        paths,
        supervisorsToRemove(await installedSupervisors(paths), trial.version, next),
      );
      return "handover";
    }
    case "failed": {
      const { code, message } = supervisorTrialFailure(trial.version, outcome.end, deadlineMs);
      return giveUp(options, onTrial, trial, revertsAgent, { code, reason: message });
    }
    case "agent-failed": {
      const after = (await loadState(paths)) ?? state;
      const why = options.agentFailure(after, outcome.end, agentDeadlineMs);
      return giveUp(options, onTrial, trial, revertsAgent, why);
    }
  }
}

/**
 * The trial failed and nothing of it runs any more: the pointer stays, the Agent's upgrade
 * on trial (when it is still the one this trial is about) is reverted with `why`, the
 * failure is recorded and the new supervisor's files are deleted.
 */
async function giveUp(
  options: SwitchOptions,
  record: SupervisorRecord,
  trial: SupervisorTrial,
  revertsAgent: boolean,
  why: { code: string; reason: string },
): Promise<StepResult> {
  const { paths, log } = options;
  const state = await loadState(paths);
  const pending = state?.switch;
  if (
    revertsAgent &&
    state !== undefined &&
    pending !== undefined &&
    pending.kind === "upgrade" &&
    pending.opId === trial.opId
  ) {
    log.warn(
      { from: pending.to, to: pending.from, reason: why.reason },
      "the new supervisor did not bring the agent back; reverting to the previous version",
    );
    await switchCurrent(paths, pending.from);
    delete state.healthFailure;
    revertTrial(state, pending, why.code, `${why.reason}; reverted to ${pending.from}`);
    await saveState(paths, state);
    await removeVersion(paths, pending.to);
  } else {
    log.error(
      { version: trial.version, reason: why.reason },
      "the new supervisor did not bring the agent back; keeping the supervisor in use",
    );
  }
  const next = failedRecord(record, trial, why.code, why.reason);
  await writeSupervisorRecord(paths, next);
  const inUse = await readSupervisorInUse(paths);
  await removeSupervisors(
    paths,
    supervisorsToRemove(await installedSupervisors(paths), inUse, next),
  );
  return "again";
}
