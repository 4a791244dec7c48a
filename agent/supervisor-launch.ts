/**
 * The launcher: what the service starts (`agent run`, the artifact installed by hand at the
 * stable path) runs the supervisor the `supervisor` pointer names, when that is another
 * program, as its child (the `delegated` role), forwarding SIGTERM and exiting as it exits;
 * a delegated supervisor that hands over to a newer one exits {@link HANDOVER_EXIT_CODE} and
 * the launcher starts the one the pointer names then. With no pointer, or one naming no
 * installed supervisor, or one that cannot be started or fails within
 * {@link FAST_FAILURE_MS} of its start, the launcher supervises itself (until the service
 * restarts): the artifact installed by hand is always there to fall back to, and nothing here
 * deletes or moves the pointer.
 */
import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import { isSea } from "node:sea";
import type { AgentLog } from "./core/log.js";
import type { InstallPaths } from "./install-dir.js";
import { childCommand } from "./launch.js";
import { readSupervisorInUse, supervisorArtifact } from "./supervisor-dir.js";
import { SUPERVISOR_ROLE_ENV } from "./supervisor-trial.js";

/** The exit code with which a delegated supervisor asks the launcher to start the one the pointer names. */
export const HANDOVER_EXIT_CODE = 77;

/** A supervisor in use that exits non-zero this soon after its start is not used this time. */
export const FAST_FAILURE_MS = 30_000;

/** The file this program runs from: the single executable, or the `.mjs` Node.js runs. */
function thisProgram(): string {
  return isSea() ? process.execPath : (process.argv[1] ?? process.execPath);
}

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    return (await realpath(a)) === (await realpath(b));
  } catch {
    return false;
  }
}

/** Options of {@link runPointedSupervisor}. */
export interface LaunchOptions {
  readonly paths: InstallPaths;
  /** `run …` with the launcher's own flags. */
  readonly args: readonly string[];
  readonly moduleRunner: string;
  readonly log: AgentLog;
  readonly signal: AbortSignal;
}

/**
 * Runs the supervisor the pointer names until it exits; resolves with its exit code (0
 * when it was stopped through `signal`), or undefined when the launcher must supervise
 * itself (no pointer, the pointer names this program or no installed supervisor, or it
 * could not be started, or it failed within {@link FAST_FAILURE_MS}).
 */
export async function runPointedSupervisor(options: LaunchOptions): Promise<number | undefined> {
  const { paths, log, signal } = options;
  const inUse = await readSupervisorInUse(paths);
  if (inUse === "") return undefined;
  const artifact = await supervisorArtifact(paths, inUse);
  if (artifact === undefined) {
    log.error(
      { supervisor: inUse },
      "the supervisor pointer names no installed supervisor; supervising with this one",
    );
    return undefined;
  }
  if (await sameFile(artifact.path, thisProgram())) return undefined;
  const command = childCommand(artifact, options.args, options.moduleRunner);
  log.info({ supervisor: inUse, file: command.file }, "starting the supervisor in use");
  const started = Date.now();
  const child = spawn(command.file, [...command.args], {
    stdio: "inherit",
    env: { ...process.env, [SUPERVISOR_ROLE_ENV]: "delegated" },
  });
  const stop = () => child.kill("SIGTERM");
  if (signal.aborted) stop();
  else signal.addEventListener("abort", stop, { once: true });
  return await new Promise<number | undefined>((resolve) => {
    child.on("error", (error) => {
      if (child.pid !== undefined) return;
      log.error(
        { supervisor: inUse, err: error.message },
        "the supervisor in use could not be started; supervising with this one",
      );
      signal.removeEventListener("abort", stop);
      resolve(undefined);
    });
    child.on("exit", (code, exitSignal) => {
      signal.removeEventListener("abort", stop);
      if (signal.aborted) {
        resolve(0);
        return;
      }
      if (code === 0 || code === HANDOVER_EXIT_CODE) {
        resolve(code);
        return;
      }
      const fast = Date.now() - started < FAST_FAILURE_MS;
      log.error(
        { supervisor: inUse, code, signal: exitSignal, ranMs: Date.now() - started },
        fast
          ? "the supervisor in use failed at start; supervising with this one"
          : "the supervisor in use exited",
      );
      resolve(fast ? undefined : (code ?? 1));
    });
  });
}
