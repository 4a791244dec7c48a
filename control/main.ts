/**
 * `npm start` (or `node dist/control.mjs`, the bundle `npm run build` writes): runs one
 * Control process until SIGTERM or SIGINT, then drains; SIGHUP re-reads the admin tokens file. Every flag and setting is checked before anything starts:
 * a bad one exits 2 with one line per problem on stderr.
 *
 * With `--workers N` this process is the primary of N Control workers sharing the ports
 * (control/cluster.ts); each worker runs this same file as one Control.
 *
 * Usage: npm start [-- --config FILE] [--workers N]
 */
import cluster from "node:cluster";
import { parseArgs } from "node:util";
import { startControl } from "./app.js";
import { parseWorkers, runPrimary } from "./cluster.js";
import { openWorkerChannel } from "./cluster-worker.js";
import { ConfigError, loadConfig } from "./config.js";
import { SchemaTooNewError } from "./db/schema-release.js";
import { createLogger } from "./log.js";
import { servingLine } from "./serving-line.js";
import { writeAdminEndpoint } from "./shared/local-endpoint.js";
import { USAGE } from "./usage.js";

async function main(): Promise<number> {
  let file: string | undefined;
  let workers: number | undefined;
  try {
    const { values } = parseArgs({
      options: {
        config: { type: "string" },
        workers: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    file = values.config;
    if (file === "") throw new Error("--config must name a file");
    if (values.workers !== undefined) workers = parseWorkers(values.workers);
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "bad arguments";
    process.stderr.write(`control: ${message} (see --help)\n`);
    return 2;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ file });
  } catch (error) {
    if (error instanceof ConfigError) {
      // One line per bad value, each naming its setting (and the variable that set it).
      process.stderr.write(error.problems.map((problem) => `control: ${problem}\n`).join(""));
      return 2;
    }
    throw error;
  }
  const log = createLogger({ level: config.log.level });
  // The lines saying what Control serves are logged at any level but silent, as they were
  // printed before they became JSON log lines (scripts wait for them).
  const announce =
    log.isLevelEnabled("info") || log.level === "silent" ? log : log.child({}, { level: "info" });
  if (workers !== undefined && cluster.isPrimary) {
    // stdout carries JSON log lines only, so a log shipper never meets a plain line.
    announce.info({ workers }, `Agent Control runs ${workers} worker(s)`);
    let code: number;
    try {
      code = await runPrimary({ config, workers, log, say: (line) => announce.info(line) });
    } catch (error) {
      if (error instanceof ConfigError) {
        // What only a start finds (the embedded PostgreSQL's initdb or server): one line each.
        process.stderr.write(error.problems.map((problem) => `control: ${problem}\n`).join(""));
        log.flush();
        return 2;
      }
      if (error instanceof SchemaTooNewError) return refuse(error, log);
      throw error;
    }
    log.info("stopped");
    log.flush();
    return code;
  }
  // A worker's channel to its primary: the primary's SIGHUP reaches it there, and a channel
  // that breaks while it starts or drains makes it drain, never crash.
  let channelLost = false;
  let onChannelLost = () => {
    channelLost = true;
  };
  const channel = cluster.isWorker ? openWorkerChannel(log, () => onChannelLost()) : undefined;
  let control: Awaited<ReturnType<typeof startControl>>;
  try {
    control = await startControl({ config, log });
  } catch (error) {
    if (error instanceof ConfigError) {
      // A setting the database contradicts (the fleet's recorded TUF timestamp window).
      process.stderr.write(error.problems.map((problem) => `control: ${problem}\n`).join(""));
      log.flush();
      return 2;
    }
    if (error instanceof SchemaTooNewError) return refuse(error, log);
    throw error;
  }
  // agentctl on this machine finds this Control's data directory (and so its operator
  // token) by the admin port it is asked to reach, and the socket it sends that token over.
  await writeAdminEndpoint(config.dataDir, {
    url: control.adminUrl,
    pid: process.pid,
    socket: control.adminSocket,
  }).catch((error: unknown) =>
    log.warn({ err: error }, "could not note the admin URL in the data dir"),
  );
  announce.info(
    {
      agentPort: control.agentPort,
      adminUrl: control.adminUrl,
      ...(config.adminToken ? {} : { operatorTokenFile: control.operatorTokenPath }),
    },
    servingLine(config.agentAddr, control.agentPort, control.adminUrl),
  );
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping && cluster.isWorker) {
        // systemd's control group and the primary both send it: the drain goes on (the
        // primary SIGKILLs a worker that outlasts the grace).
        log.debug({ signal }, "draining already");
        return;
      }
      if (stopping) {
        log.warn({ signal }, "second signal: exiting now");
        process.exit(130);
      }
      stopping = true;
      log.info({ signal }, "shutting down: draining agent streams");
      control
        .stop()
        .catch((error: unknown) => log.error({ err: error }, "shutdown failed"))
        .finally(resolve);
    };
    process.on("SIGTERM", onSignal);
    if (cluster.isWorker) {
      // The primary decides when workers stop (a terminal's Ctrl-C reaches the whole group),
      // and a worker whose primary is gone drains and exits.
      process.on("SIGINT", () => {});
      process.once("disconnect", () => onSignal("SIGTERM"));
      onChannelLost = () => onSignal("SIGTERM");
      if (channelLost || !process.connected) onSignal("SIGTERM");
      channel?.serve(() => control.reloadAdminTokens({ quiet: true }), control.metrics);
    } else {
      process.on("SIGINT", onSignal);
    }
    // Rotating admin tokens: the reload logs what it did; a bad file changes nothing.
    process.on("SIGHUP", () => {
      if (!stopping) control.reloadAdminTokens();
    });
  });
  log.info("stopped");
  log.flush();
  return 0;
}

/** One line on stderr and exit 2: the database's schema is too far ahead of this Control. */
function refuse(error: SchemaTooNewError, log: ReturnType<typeof createLogger>): number {
  process.stderr.write(`control: ${error.message}\n`);
  log.flush();
  return 2;
}

main().then(
  (code) => {
    process.exitCode = code;
    // A cluster worker's channel to its primary would keep it alive once drained.
    if (cluster.isWorker) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`control: failed to start: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
