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
 */
import { type ChildProcess, spawn } from "node:child_process";
import { healthBudgetMs } from "../control/shared/release/index.js";
import { type AgentState, loadState, type PendingSwitch, saveState } from "./agent-state.js";
import type { AgentLog } from "./core/log.js";
import { sleep } from "./core/waker.js";
import { HEALTH_CHECK_FAILED, HEALTH_CHECK_FAILED_EXIT_CODE } from "./health-trial.js";
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

/** The exit code with which the Agent asks to be restarted into `current`. */
export const RESTART_EXIT_CODE = 75;

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
}

/** How one child run ended. */
interface ChildEnd {
  readonly welcomed: boolean;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The start deadline passed before a Welcome (the child was killed). */
  readonly deadline: boolean;
  readonly ranMs: number;
  /** The child could not be started at all (the spawn error). */
  readonly startError?: string;
}

/** Supervises until `options.signal` aborts. Rejects only when the install directory is unusable. */
export async function supervise(options: SupervisorOptions): Promise<void> {
  const { paths, log, signal } = options;
  let crashes = 0;
  while (!signal.aborted) {
    const state = await loadState(paths);
    const current = await readCurrent(paths);
    if (state === undefined || current === undefined) {
      throw new Error(`${paths.root} holds no installed Agent (state.json and current are needed)`);
    }
    if ((await installedArtifact(paths, current)) === undefined) {
      // `current` names a version with no artifact: running it can only fail, for ever.
      if (!(await fallBackFrom(options, state, current))) {
        await sleep(Math.min(30_000, 1000 * 2 ** crashes++), signal);
      }
      continue;
    }
    const { changed, trial } = reconcile(state, current);
    if (changed) await saveState(paths, state);
    // A version on trial runs its release's health checks before it connects: its deadline
    // covers them.
    const deadlineMs = trial ? options.startDeadlineMs + healthBudgetMs(trial.health) : undefined;
    log.info({ version: current, trial: trial?.opId, deadlineMs }, "starting the agent");
    const end = await runChild(options, current, deadlineMs);
    if (signal.aborted) break;
    if (trial !== undefined && !end.welcomed) {
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

/** The code and reason of reverting `trial`, whose run ended with `end` before a Welcome. */
function whyReverted(
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
