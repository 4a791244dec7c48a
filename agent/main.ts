/**
 * `npm run agent -- run|status …`, and the bundled artifact's entry point (`node agent.mjs
 * run|serve|status …`, or `agent run|serve|status …` for the single executable). Exit codes: 0 after a clean stop, 2 for bad flags (one line on
 * stderr), 1 on failure, 75 when the Agent asks its supervisor for a restart, 76 when a version
 * on trial failed its release's health checks, 77 when a supervisor hands over to a newer one.
 * `run` is the launcher the service starts (supervisor-launch.ts): it runs the supervisor the
 * install directory's pointer names, or supervises itself.
 */
import { isSea } from "node:sea";
import { runAgent } from "./agent-process.js";
import { loadState } from "./agent-state.js";
import { BUILD_PLATFORM, BUILD_VERSION } from "./build-version.js";
import {
  type AgentCommand,
  hostPlatform,
  parseAgentArgs,
  type RunOptions,
  usage,
} from "./cli-args.js";
import { artifactOrigins, DEFAULT_DOWNLOAD_POLICY, trustedOrigins } from "./core/download.js";
import type { AgentLog } from "./core/log.js";
import type { SupervisorUpdateStep } from "./core/supervisor-update.js";
import { readStreamTls, streamCredentials } from "./core/tls.js";
import { tufClient } from "./core/tuf-check.js";
import { HEALTH_CHECK_FAILED_EXIT_CODE, passTrialHealth } from "./health-trial.js";
import { installPaths, trustInitialRoot } from "./install-dir.js";
import { ensureInstalled } from "./install-first.js";
import { jsonLog } from "./json-log.js";
import { defaultModuleRunner } from "./launch.js";
import { readStatus } from "./status.js";
import { RESTART_EXIT_CODE, supervise, type WelcomedMessage } from "./supervisor.js";
import { HANDOVER_EXIT_CODE, runPointedSupervisor } from "./supervisor-launch.js";
import { supervisorRole } from "./supervisor-trial.js";

class UsageError extends Error {}

async function main(): Promise<number> {
  const parsed = parseAgentArgs(process.argv.slice(2), process.env);
  if (!parsed.ok) throw new UsageError(parsed.message);
  const command: AgentCommand = parsed.command;
  switch (command.kind) {
    case "help":
      process.stdout.write(usage(invocation()));
      return 0;
    case "status":
      process.stdout.write(
        `${JSON.stringify(await readStatus(installPaths(command.installDir)), null, 2)}\n`,
      );
      return 0;
    case "run":
      return runSupervisor(command.options);
    case "serve":
      return serve(command.options);
  }
}

/**
 * How this Agent was started, as its help names it: the single executable's own path, `node`
 * and the bundled module's path, or `npm run agent --` from source.
 */
function invocation(): string {
  if (isSea()) return process.execPath;
  if (BUILD_VERSION !== undefined) return `node ${process.argv[1] ?? "agent.mjs"}`;
  return "npm run agent --";
}

/**
 * Stops on SIGTERM/SIGINT (twice: at once), logging one "stopping" line with the signal
 * first, so a stop by the service manager is in the log of the supervisor and of the Agent.
 */
function rootSignal(log: AgentLog): AbortSignal {
  const root = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(130);
    log.info({ signal, pid: process.pid }, "stopping");
    root.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return root.signal;
}

async function runSupervisor(options: RunOptions): Promise<number> {
  const paths = installPaths(options.installDir);
  const log = jsonLog("agent-supervisor");
  const role = supervisorRole(process.env);
  const saved = await loadState(paths);
  if (
    options.joinToken === undefined &&
    options.tls?.cert === undefined &&
    saved?.nodeToken === undefined
  ) {
    throw new UsageError(
      "--join-token is required until the node has enrolled (or give --cert and --key)",
    );
  }
  const installed =
    role === "trial"
      ? undefined
      : await ensureInstalled(
          paths,
          options.nodeId,
          options.platform ?? BUILD_PLATFORM ?? hostPlatform(),
        );
  if (installed !== undefined)
    log.info({ version: installed, dir: paths.root }, "installed the first version");
  const root = rootSignal(log);
  // On trial, a supervisor whose parent is gone stops (its parent decides everything).
  const orphaned = new AbortController();
  if (role === "trial") process.on("disconnect", () => orphaned.abort());
  const signal = AbortSignal.any([root, orphaned.signal]);
  const flags = process.argv.slice(3);
  const moduleRunner = defaultModuleRunner();
  const killAt = process.env.AGENT_TEST_KILL_AT;
  for (;;) {
    if (role === "launcher") {
      const code = await runPointedSupervisor({
        paths,
        args: ["run", ...flags],
        moduleRunner,
        log,
        signal,
      });
      if (code === HANDOVER_EXIT_CODE && !signal.aborted) continue;
      if (code !== undefined) return code;
    }
    log.info({ role, build: BUILD_VERSION ?? "source" }, "supervising");
    const end = await supervise({
      paths,
      childArgs: ["serve", ...flags],
      childEnv: options.tls?.ca !== undefined ? { NODE_EXTRA_CA_CERTS: options.tls.ca } : {},
      startDeadlineMs: options.startDeadlineMs,
      log,
      signal,
      moduleRunner,
      role,
      update: {
        supervisorArgs: ["run", ...flags],
        ...(killAt === undefined ? {} : { onStep: (step) => killGroupAt(killAt, step) }),
      },
    });
    if (end === "stopped" || signal.aborted) return 0;
    if (role !== "launcher") return HANDOVER_EXIT_CODE;
  }
}

/**
 * Test only (`AGENT_TEST_KILL_AT=<step>`): a power cut at one step of a supervisor update,
 * SIGKILL of this process group (the supervisor, the one on trial and the Agent at once).
 */
function killGroupAt(killAt: string, step: SupervisorUpdateStep): void {
  if (step === killAt) process.kill(0, "SIGKILL");
}

async function serve(options: RunOptions): Promise<never> {
  const paths = installPaths(options.installDir);
  const state = await loadState(paths);
  if (state === undefined) throw new Error(`${paths.root} holds no agent state; start it with run`);
  const version = BUILD_VERSION ?? state.version;
  if (options.tuf !== undefined) await trustInitialRoot(paths, options.tuf.root);
  const log = jsonLog("agent");
  const signal = rootSignal(log);
  // Orphaned by a supervisor that died: stop, the next supervisor starts a fresh Agent.
  const orphaned = new AbortController();
  process.on("disconnect", () => orphaned.abort());
  const stop = AbortSignal.any([signal, orphaned.signal]);
  if (!(await passTrialHealth(paths, state, version, log, stop)) && !stop.aborted) {
    process.exit(HEALTH_CHECK_FAILED_EXIT_CODE);
  }
  // The stream's TLS, read once: the channel's credentials and the downloads' CA and identity.
  const tls = options.clearText ? undefined : (readStreamTls(options.tls ?? {}) ?? {});
  const exit = await runAgent({
    paths,
    state,
    version,
    server: options.server,
    joinToken: options.joinToken,
    pins: options.pins,
    threshold: options.threshold,
    platform: options.platform ?? BUILD_PLATFORM ?? hostPlatform(),
    labels: options.labels,
    // Without --ca the system's roots verify Control; clear text only as RunOptions allows.
    credentials: tls === undefined ? undefined : streamCredentials(tls, options.server),
    clientCertificate: !options.clearText && options.tls?.cert !== undefined,
    tuf:
      options.tuf === undefined
        ? undefined
        : tufClient({ metadataDir: paths.tuf, metadataBaseUrl: options.tuf.url }),
    tufRefreshMs: options.tufRefreshMs,
    trustedOrigins: trustedOrigins(options.server, !options.clearText, options.downloadOrigins),
    downloadTls: tls,
    artifactOrigins: artifactOrigins({
      server: options.server,
      tls: !options.clearText,
      downloadOrigins: options.downloadOrigins,
      mirrors: options.artifactMirrors,
      tufUrl: options.tuf?.url,
    }),
    downloadPolicy: {
      stallMs: DEFAULT_DOWNLOAD_POLICY.stallMs,
      graceMs: options.downloadGraceMs,
      minBytesPerSecond: options.downloadMinBytesPerSecond,
    },
    log,
    deferral: { lockFile: options.deferLock, command: options.deferCommand },
    onWelcomed: () => {
      const message: WelcomedMessage = { type: "welcomed", version };
      process.send?.(message);
    },
    signal: stop,
  });
  // Exit now: idle keep-alive sockets of downloads must not hold the restart back.
  process.exit(exit === "restart" ? RESTART_EXIT_CODE : 0);
}

main().then(
  (code) => {
    process.exitCode = code;
    if (process.connected) process.disconnect();
  },
  (error: unknown) => {
    const usage = error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`agent: ${message}${usage ? " (see --help)" : ""}\n`);
    process.exitCode = usage ? 2 : 1;
    if (process.connected) process.disconnect();
  },
);
