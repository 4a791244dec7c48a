/**
 * Runs a new supervisor on trial, as a child of the supervisor in use, and says how it
 * went: it brought the Agent back (the Agent's Welcome, relayed over the IPC channel), or
 * it exited, could not be started or passed its deadline first (it is stopped: SIGTERM,
 * then SIGKILL), or the Agent it ran ended before its Welcome (the Agent's failure, not
 * the supervisor's). Whatever happens, once a failure or an abort is returned, neither the
 * supervisor on trial nor the Agent it started still runs, so the caller alone writes the
 * install directory from then on.
 *
 * The messages a supervisor on trial sends its parent ({@link TrialMessage}) are sent by
 * {@link supervise} when it runs with the `trial` role.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { AgentLog } from "./core/log.js";
import type { TrialEnd } from "./core/supervisor-update.js";
import type { InstalledArtifact } from "./install-dir.js";
import { childCommand } from "./launch.js";

/** How long a supervisor that was asked to stop has before it is killed. */
export const SUPERVISOR_STOP_GRACE_MS = 10_000;

/** The environment variable that gives a supervisor its role (see {@link SupervisorRole}). */
export const SUPERVISOR_ROLE_ENV = "AGENT_SUPERVISOR_ROLE";

/**
 * What a supervisor process is: `launcher` (the one the service starts: it runs the
 * supervisor the pointer names, or supervises itself), `delegated` (started by the launcher
 * from the pointer), `trial` (started on trial by the supervisor in use).
 */
export type SupervisorRole = "launcher" | "delegated" | "trial";

/** The role of this process, from its environment. */
export function supervisorRole(env: NodeJS.ProcessEnv): SupervisorRole {
  const role = env[SUPERVISOR_ROLE_ENV];
  return role === "delegated" || role === "trial" ? role : "launcher";
}

/** A message from a supervisor on trial to the supervisor that started it. */
export type TrialMessage =
  /** It started the Agent (its process id, so the parent can make sure it is gone). */
  | { readonly type: "agent-started"; readonly pid: number }
  /** The Agent it runs was welcomed by Control. */
  | { readonly type: "welcomed"; readonly version: string }
  /** The Agent it ran ended before a Welcome (the supervisor exits after sending this). */
  | {
      readonly type: "agent-ended";
      readonly code: number | null;
      readonly signal: string | null;
      readonly deadline: boolean;
      readonly ranMs: number;
      readonly startError?: string;
    };

/** How a trial went. */
export type TrialOutcome =
  /** The Agent is back under the new supervisor; `stop` ends it (and its Agent). */
  | { readonly kind: "welcomed"; readonly stop: () => Promise<void> }
  /** The supervisor failed (both it and any Agent it started are gone). */
  | { readonly kind: "failed"; readonly end: TrialEnd }
  /** The Agent it ran ended before its Welcome (both are gone). */
  | { readonly kind: "agent-failed"; readonly end: Extract<TrialMessage, { type: "agent-ended" }> }
  /** `signal` aborted: the trial was stopped (both are gone). */
  | { readonly kind: "aborted" };

/** Options of {@link runSupervisorTrial}. */
export interface TrialOptions {
  readonly artifact: InstalledArtifact;
  /** `run …` with the flags of the supervisor in use. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly moduleRunner: string;
  readonly deadlineMs: number;
  readonly log: AgentLog;
  readonly signal: AbortSignal;
}

/** Starts the supervisor of `options.artifact` on trial; resolves with how it went. */
export function runSupervisorTrial(options: TrialOptions): Promise<TrialOutcome> {
  const command = childCommand(options.artifact, options.args, options.moduleRunner);
  const child: ChildProcess = spawn(command.file, [...command.args], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...options.env, [SUPERVISOR_ROLE_ENV]: "trial" },
  });
  const agents = new Set<number>();
  const exit = new Promise<{ code: number | null; signal: string | null; error?: string }>(
    (resolve) => {
      child.on("exit", (code, signal) => resolve({ code, signal }));
      child.on("error", (error) => {
        if (child.pid === undefined) resolve({ code: null, signal: null, error: error.message });
      });
    },
  );
  /** Stops the supervisor on trial and the Agents it reported; resolves once all are gone. */
  const stopAll = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), SUPERVISOR_STOP_GRACE_MS);
      await exit;
      clearTimeout(killer);
    }
    await Promise.all([...agents].map((pid) => processGone(pid)));
  };
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let agentEnd: Extract<TrialMessage, { type: "agent-ended" }> | undefined;
    const finish = (outcome: TrialOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      timedOut = true;
      options.log.warn(
        { deadlineMs: options.deadlineMs },
        "the supervisor on trial did not bring the agent back in time; stopping it",
      );
      void stopAll().then(() =>
        finish({ kind: "failed", end: { deadline: true, code: null, signal: null } }),
      );
    }, options.deadlineMs);
    const onAbort = () => void stopAll().then(() => finish({ kind: "aborted" }));
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });
    child.on("message", (message: Partial<TrialMessage>) => {
      if (message?.type === "agent-started" && typeof message.pid === "number") {
        agents.add(message.pid);
      } else if (message?.type === "agent-ended") {
        agentEnd = message as Extract<TrialMessage, { type: "agent-ended" }>;
      } else if (message?.type === "welcomed" && !settled) {
        clearTimeout(timer);
        finish({ kind: "welcomed", stop: stopAll });
      }
    });
    void exit.then(async (end) => {
      if (settled) return;
      await stopAll();
      if (agentEnd !== undefined) {
        finish({ kind: "agent-failed", end: agentEnd });
      } else {
        finish({
          kind: "failed",
          end: {
            // Stopped because its deadline passed: that, not the SIGTERM, is why it ended.
            deadline: timedOut,
            code: end.code,
            signal: end.signal,
            ...(end.error === undefined ? {} : { startError: end.error }),
          },
        });
      }
    });
  });
}

/**
 * Resolves once process `pid` is gone, killing it after {@link SUPERVISOR_STOP_GRACE_MS};
 * gives up waiting 2 s after the kill (a zombie no one reaps is no Agent).
 */
async function processGone(pid: number): Promise<void> {
  const started = Date.now();
  let killed = false;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() - started > SUPERVISOR_STOP_GRACE_MS + 2000) return;
    if (!killed && Date.now() - started > SUPERVISOR_STOP_GRACE_MS) {
      killed = true;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
