/**
 * The supervisor: a small process that runs what `current` points at as its child and keeps
 * the node alive whatever that child does. It restarts the child when it exits (at once
 * after a requested restart, with backoff after a crash), and when a newly switched version
 * crashes before Control welcomes it, or is not welcomed within the start deadline, it
 * moves `current` back to the previous version by itself and records the failure, which the
 * Agent reports once it is welcomed again. The supervisor never runs protocol code, so no
 * release can replace it: a broken release costs one failed node, never a bricked one.
 * A version on trial that fails its release's health checks exits with
 * {@link HEALTH_CHECK_FAILED_EXIT_CODE} before it connects; it is reverted the same way and
 * its operation recorded FAILED `health_check_failed` with the check's own message.
 * A version installed as a single executable runs directly; one installed as an ES module
 * runs with Node.js ({@link childCommand}); one that cannot be started at all (no Node.js
 * on the PATH of a single-executable supervisor, a file that is not executable) counts as a
 * crash before its Welcome.
 * Between two runs it also carries a supervisor update on ({@link supervisorStep}): an
 * upgrade whose verified release carries its supervisor is run by that supervisor, started
 * on trial, and this one hands over once the Agent is back under it. Started on trial
 * itself (the `trial` role), it runs the Agent, relays the Agent's Welcome to its parent and,
 * when the Agent ends before a Welcome, says how and exits, leaving every decision and
 * every write to the supervisor in use.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { healthBudgetMs } from "../control/shared/release/index.js";
import { type AgentState, loadState, saveState } from "./agent-state.js";
import type { AgentLog } from "./core/log.js";
import { sleep } from "./core/waker.js";
import {
  type InstallPaths,
  installedArtifact,
  installedVersions,
  readCurrent,
  removeVersion,
  switchCurrent,
} from "./install-dir.js";
import { childCommand, defaultModuleRunner } from "./launch.js";
import { fallBack, fallbackVersion, reconcile, revertTrial } from "./reconcile.js";
import { type ChildEnd, whyReverted } from "./revert-reason.js";
import { type SwitchOptions, supervisorStep } from "./supervisor-switch.js";
import type { SupervisorRole, TrialMessage } from "./supervisor-trial.js";

/** The exit code with which the Agent asks to be restarted into `current`. */
export const RESTART_EXIT_CODE = 75;

/** How {@link supervise} ended. */
export type SupervisorEnd = "stopped" | "handover";

/** The message the Agent sends its supervisor (over the IPC channel) when welcomed. */
export interface WelcomedMessage {
  readonly type: "welcomed";
  readonly version: string;
}

/** Everything the supervisor needs. */
export interface SupervisorOptions {
  readonly paths: InstallPaths;
  /** Arguments after the artifact path (`serve --install-dir …`). */
  readonly childArgs: readonly string[];
  /** Extra environment of the child. */
  readonly childEnv: NodeJS.ProcessEnv;
  readonly startDeadlineMs: number;
  readonly log: AgentLog;
  /** Aborting stops the child (SIGTERM) and then the supervisor. */
  readonly signal: AbortSignal;
  /** The Node.js binary that runs ES module artifacts; default {@link defaultModuleRunner}. */
  readonly moduleRunner?: string;
  /** What this supervisor is (default `launcher`); `trial`: on trial, see the file's TSDoc. */
  readonly role?: SupervisorRole;
  /**
   * Supervisor updates: `run …` with this supervisor's flags, and the hook called at each
   * step. Absent: releases that carry a supervisor are run as any other.
   */
  readonly update?: Pick<SwitchOptions, "supervisorArgs" | "onStep">;
}

/**
 * Supervises until `options.signal` aborts ("stopped") or a new supervisor is the one in use
 * ("handover"); on trial, until its first Agent ends before a Welcome. Rejects only when the
 * install directory is unusable.
 */
export async function supervise(options: SupervisorOptions): Promise<SupervisorEnd> {
  const { paths, log, signal } = options;
  const onTrial = options.role === "trial";
  let welcomedOnce = false;
  let crashes = 0;
  while (!signal.aborted) {
    const state = await loadState(paths);
    const current = await readCurrent(paths);
    if (state === undefined || current === undefined) {
      throw new Error(`${paths.root} holds no installed Agent (state.json and current are needed)`);
    }
    if (onTrial && (await installedArtifact(paths, current)) === undefined) {
      // On trial it never falls back (that writes): it says so and leaves it to its parent.
      if (!welcomedOnce) {
        tellParent({
          type: "agent-ended",
          code: null,
          signal: null,
          deadline: false,
          ranMs: 0,
          startError: "no artifact is installed",
        });
      }
      return "stopped";
    }
    if ((await installedArtifact(paths, current)) === undefined) {
      // `current` names a version with no artifact: running it can only fail, for ever.
      if (!(await fallBackFrom(options, state, current))) {
        await sleep(Math.min(30_000, 1000 * 2 ** crashes++), signal);
      }
      continue;
    }
    const { changed, trial } = reconcile(state, current);
    // On trial, the supervisor in use has reconciled and saved; this one writes nothing.
    if (changed && !onTrial) await saveState(paths, state);
    if (!onTrial && options.update !== undefined) {
      const next = await supervisorStep(switchOptions(options), state, current);
      if (next === "handover") return "handover";
      if (next === "stopped") break;
      if (next === "again") continue;
    }
    // A version on trial runs its release's health checks before it connects: its deadline
    // covers them.
    const deadlineMs = trial ? options.startDeadlineMs + healthBudgetMs(trial.health) : undefined;
    log.info({ version: current, trial: trial?.opId, deadlineMs }, "starting the agent");
    const end = await runChild(options, current, deadlineMs);
    if (signal.aborted) break;
    if (end.welcomed) welcomedOnce = true;
    if (onTrial && !welcomedOnce) {
      tellParent({
        type: "agent-ended",
        code: end.code,
        signal: end.signal,
        deadline: end.deadline,
        ranMs: end.ranMs,
        ...(end.startError === undefined ? {} : { startError: end.startError }),
      });
      return "stopped";
    }
    if (trial !== undefined && !end.welcomed && !onTrial) {
      const after = (await loadState(paths)) ?? state;
      const { code, reason } = whyReverted(trial, end, after, deadlineMs ?? 0);
      log.warn({ from: trial.to, to: trial.from, reason }, "reverting to the previous version");
      await switchCurrent(paths, trial.from);
      delete after.healthFailure;
      revertTrial(after, trial, code, `${reason}; reverted to ${trial.from}`);
      await saveState(paths, after);
      await removeVersion(paths, trial.to);
      continue;
    }
    if (end.code === RESTART_EXIT_CODE) {
      crashes = 0;
      continue;
    }
    if (end.ranMs > 60_000) crashes = 0;
    const delay = Math.min(30_000, 1000 * 2 ** crashes++);
    log.warn(
      { code: end.code, signal: end.signal, delayMs: delay },
      "the agent exited; restarting it",
    );
    await sleep(delay, signal);
  }
  return "stopped";
}

/** Sends `message` to the supervisor that started this one on trial (when it still listens). */
function tellParent(message: TrialMessage): void {
  if (process.connected) process.send?.(message);
}

/** The options of a supervisor update run by this supervisor. */
function switchOptions(options: SupervisorOptions): SwitchOptions {
  return {
    paths: options.paths,
    supervisorArgs: options.update?.supervisorArgs ?? [],
    ...(options.update?.onStep === undefined ? {} : { onStep: options.update.onStep }),
    env: options.childEnv,
    moduleRunner: options.moduleRunner ?? defaultModuleRunner(),
    startDeadlineMs: options.startDeadlineMs,
    log: options.log,
    signal: options.signal,
    agentFailure: (state, end, deadlineMs) => {
      const trial = state.switch;
      const childEnd: ChildEnd = {
        welcomed: false,
        ranMs: 0,
        deadline: end.deadline,
        code: end.code,
        signal: end.signal as NodeJS.Signals | null,
        ...(end.startError === undefined ? {} : { startError: end.startError }),
      };
      if (trial === undefined) {
        return {
          code: "start_failed",
          reason: `the agent ended (${end.signal ?? `code ${end.code}`}) before Control welcomed it under the new supervisor`,
        };
      }
      return whyReverted(trial, childEnd, state, deadlineMs);
    },
  };
}

/**
 * Moves `current` off `missing` (a version with no artifact) to an installed version
 * ({@link fallbackVersion}), recording why in the state first; deletes nothing. False when
 * no version is installed to fall back to (the caller waits and looks again).
 */
async function fallBackFrom(
  options: SupervisorOptions,
  state: AgentState,
  missing: string,
): Promise<boolean> {
  const { paths, log } = options;
  const installed = await installedVersions(paths);
  const to = fallbackVersion(state, missing, installed);
  if (to === undefined) {
    log.error(
      { version: missing, installed },
      "current names a version with no artifact and no other version is installed",
    );
    return false;
  }
  log.error(
    { version: missing, to },
    "current names a version with no artifact; falling back to an installed version",
  );
  fallBack(state, missing, to, installed);
  await saveState(paths, state);
  await switchCurrent(paths, to);
  return true;
}

async function runChild(
  options: SupervisorOptions,
  version: string,
  deadlineMs: number | undefined,
): Promise<ChildEnd> {
  const started = Date.now();
  const artifact = await installedArtifact(options.paths, version);
  if (artifact === undefined) {
    options.log.error({ version }, "the installed version has no artifact");
    return {
      welcomed: false,
      code: null,
      signal: null,
      deadline: false,
      ranMs: 0,
      startError: "no artifact is installed",
    };
  }
  const command = childCommand(
    artifact,
    options.childArgs,
    options.moduleRunner ?? defaultModuleRunner(),
  );
  const child: ChildProcess = spawn(command.file, [...command.args], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...options.childEnv },
  });
  let welcomed = false;
  let deadline = false;
  if (options.role === "trial" && child.pid !== undefined) {
    tellParent({ type: "agent-started", pid: child.pid });
  }
  return new Promise((resolve) => {
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            deadline = true;
            child.kill("SIGKILL");
          }, deadlineMs);
    const stop = () => child.kill("SIGTERM");
    if (options.signal.aborted) stop();
    else options.signal.addEventListener("abort", stop, { once: true });
    child.on("message", (message: Partial<WelcomedMessage>) => {
      if (message?.type === "welcomed" && !deadline) {
        welcomed = true;
        clearTimeout(timer);
        if (options.role === "trial") tellParent({ type: "welcomed", version });
      }
    });
    const end = (result: Omit<ChildEnd, "welcomed" | "deadline" | "ranMs">) => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", stop);
      resolve({ welcomed, deadline, ranMs: Date.now() - started, ...result });
    };
    child.on("error", (error) => {
      options.log.error({ err: String(error), file: command.file }, "could not start the agent");
      // A child that never started emits no "exit": this run ends here.
      if (child.pid === undefined) {
        end({ code: null, signal: null, startError: error.message });
      }
    });
    child.on("exit", (code, signal) => end({ code, signal }));
  });
}
