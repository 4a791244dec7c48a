/**
 * `npm start -- --workers N`: N Control processes on one machine, sharing the agent, admin and
 * downloads ports through `node:cluster` (the primary accepts connections and hands them to the
 * workers in turn). Each worker is a whole Control — its own agent streams, intake, delivery
 * and admin API; one of them leads the campaign worker through the lease — so they are the
 * active-active Controls of docs/decisions.md, on one host.
 *
 * The primary serves nothing itself, but one scrape of `/metrics` on the shared admin port
 * answers for the whole group: the worker it reaches asks the primary, which gathers every
 * worker's series over IPC and aggregates them (control/metrics/group-scrape-primary.ts).
 * Before any worker starts it owns the database side: it
 * starts the embedded PostgreSQL when `DATABASE_URL` is unset (the workers get its URL),
 * applies the migrations once (workers starting together would race them), and settles the
 * operator token (a generated one is written once; each worker reads the file), and it clears a
 * stale admin socket (control/admin/admin-socket.ts) the workers then share. It restarts a
 * worker that dies (after a second, longer while one keeps dying young).
 *
 * The primary is the process systemd's `$MAINPID` names, so it handles every signal it may be
 * sent, from its first line on: SIGTERM, SIGINT and SIGQUIT ask every worker to drain
 * (SIGTERM), wait for them and stop the database last (a second one SIGKILLs the workers,
 * and the database is still stopped); SIGHUP has every worker re-read the admin tokens file
 * and logs one line for all (control/cluster-reload.ts). An uncaught error in the primary is
 * logged and stops the workers and then the database too, and the primary exits 1: no path
 * that lets it run its code leaves the database running without its owner (a SIGKILL cannot
 * be caught: the next start adopts that server). A worker whose primary is gone (its IPC
 * channel closed) drains and exits on its own (control/cluster-worker.ts).
 */
import cluster, { type Worker } from "node:cluster";
import { prepareAdminSocket } from "./admin/admin-socket.js";
import { resolveOperatorToken } from "./admin/auth.js";
import { reloadInEveryWorker } from "./cluster-reload.js";
import type { ControlConfig } from "./config.js";
import { openDatabase } from "./db/database.js";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded-postgres.js";
import type { Logger } from "./log.js";
import { serveGroupScrapes } from "./metrics/group-scrape-primary.js";

/** The most workers `--workers` accepts. */
export const MAX_WORKERS = 64;

/** A worker that dies younger than this is restarted with a growing delay. */
const YOUNG_MS = 10_000;
const FIRST_RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

/** Parses `--workers N`: an integer from 1 to {@link MAX_WORKERS}; throws with a reason. */
export function parseWorkers(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new Error(`--workers must be a whole number from 1 to ${MAX_WORKERS}, not "${value}"`);
  }
  return n;
}

/** Options of {@link runPrimary}. */
export interface PrimaryOptions {
  readonly config: ControlConfig;
  readonly workers: number;
  readonly log: Logger;
  /** Told one line per worker started or lost, for people watching the console. */
  readonly say: (line: string) => void;
}

/**
 * Runs the cluster's primary until SIGTERM, SIGINT or SIGQUIT (or an uncaught error);
 * resolves once all has stopped, with the exit status: 0, or 1 after an uncaught error.
 */
export async function runPrimary(o: PrimaryOptions): Promise<number> {
  const { config, log } = o;
  const life = new PrimaryLife(log);
  let embedded: EmbeddedDatabase | undefined;
  try {
    let url = config.databaseUrl;
    if (!url) {
      embedded = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        onLog: (line) => log.debug({ component: "postgres" }, line),
      });
      url = embedded.url;
      log.info({ dataDir: config.dataDir }, "embedded PostgreSQL started");
    }
    if (!life.stopping) {
      const db = await openDatabase({ url, log });
      await db.close();
      const operator = await resolveOperatorToken(config.adminToken, config.dataDir);
      if (operator.source === "generated") {
        log.info({ path: operator.path }, "generated the operator admin token");
      }
      // Once, before any worker binds it: a worker never removes a socket (its siblings share it).
      await prepareAdminSocket(config.adminSocket);
    }
    if (!life.stopping) await supervise(o, url, life);
  } finally {
    if (embedded) await embedded.stop();
    life.dispose();
  }
  return life.exitCode;
}

/** The signals that stop the primary (and so the workers and the database). */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGQUIT"] as const;

/**
 * The primary's signal and error handlers, installed at once (before the database starts) and
 * kept until it stops: a signal that came before the workers are forked stops the start.
 */
class PrimaryLife {
  stopping = false;
  exitCode = 0;
  /** Resolves with what stopped the primary. */
  readonly stopped: Promise<string>;
  /** Set while workers run: SIGHUP re-reads the tokens there. */
  onReload: ((signal: NodeJS.Signals) => void) | undefined;
  /** Set while workers run: a second stop signal SIGKILLs them. */
  onForce: (() => void) | undefined;
  private resolveStopped: (why: string) => void = () => {};
  private readonly listeners: Array<[string, (...args: never[]) => void]> = [];

  constructor(private readonly log: Logger) {
    this.stopped = new Promise((resolveStopped) => {
      this.resolveStopped = resolveStopped;
    });
    for (const signal of STOP_SIGNALS) this.listen(signal, () => this.stopOn(signal));
    this.listen("SIGHUP", () => {
      if (this.stopping)
        log.info({ signal: "SIGHUP" }, "stopping: the admin tokens are not reloaded");
      else if (this.onReload) this.onReload("SIGHUP");
      else
        log.info(
          { signal: "SIGHUP" },
          "no worker runs yet: each reads the admin tokens file as it starts",
        );
    });
    const fatal = (error: unknown) => {
      this.exitCode = 1;
      log.fatal(
        { err: error },
        "uncaught error in the primary: stopping the workers and the database",
      );
      this.stop("uncaught error");
    };
    this.listen("uncaughtException", fatal);
    this.listen("unhandledRejection", fatal);
  }

  private listen(event: string, listener: (...args: never[]) => void): void {
    process.on(event as NodeJS.Signals, listener as () => void);
    this.listeners.push([event, listener]);
  }

  private stopOn(signal: NodeJS.Signals): void {
    if (!this.stopping) {
      this.log.info({ signal }, "stopping: the workers drain, then the database stops");
      this.stop(signal);
    } else if (this.onForce) {
      this.log.warn({ signal }, "second signal: SIGKILL to the workers; the database still stops");
      this.onForce();
    }
  }

  private stop(why: string): void {
    this.stopping = true;
    this.resolveStopped(why);
  }

  /** Removes the handlers (the process is about to end). */
  dispose(): void {
    for (const [event, listener] of this.listeners) {
      process.removeListener(event as NodeJS.Signals, listener as () => void);
    }
  }
}

/** Forks the workers, restarts those that die, and stops them all once `life` stops. */
async function supervise(o: PrimaryOptions, databaseUrl: string, life: PrimaryLife): Promise<void> {
  const { log } = o;
  let restartMs = FIRST_RESTART_MS;
  const born = new Map<Worker, number>();
  const fork = () => {
    if (life.stopping) return;
    const worker = cluster.fork({ DATABASE_URL: databaseUrl });
    // A message that cannot reach a dying worker is no error of the primary's.
    worker.on("error", (error: Error) =>
      log.warn({ workerPid: worker.process.pid, err: error.message }, "worker channel error"),
    );
    born.set(worker, Date.now());
    o.say(`worker ${worker.process.pid} started`);
    log.info({ workerPid: worker.process.pid }, "worker started");
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    const lived = Date.now() - (born.get(worker) ?? 0);
    born.delete(worker);
    if (life.stopping) return;
    const delay = lived < YOUNG_MS ? restartMs : FIRST_RESTART_MS;
    restartMs = lived < YOUNG_MS ? Math.min(MAX_RESTART_MS, restartMs * 2) : FIRST_RESTART_MS;
    o.say(`worker ${worker.process.pid} died (${signal ?? `exit ${code}`}); another starts`);
    log.warn(
      { workerPid: worker.process.pid, code, signal, delayMs: delay },
      "worker died; restarting",
    );
    setTimeout(fork, delay);
  };
  cluster.on("exit", onExit);
  let reloading: Promise<void> = Promise.resolve();
  life.onReload = (signal) => {
    // One reload at a time, each over the workers running when it starts.
    reloading = reloading.then(() =>
      reloadInEveryWorker(
        [...born.keys()].filter((w) => !w.isDead()),
        log,
        signal,
      ),
    );
  };
  // One scrape of the shared admin port answers for every worker (the worker it reaches asks).
  const stopScrapes = serveGroupScrapes({
    workers: () => [...born.keys()].filter((w) => !w.isDead()),
    log,
  });
  life.onForce = () => {
    for (const worker of born.keys()) if (!worker.isDead()) worker.process.kill("SIGKILL");
  };
  for (let i = 0; i < o.workers; i++) fork();

  await life.stopped;
  life.onReload = undefined;
  log.info({ workers: born.size }, "stopping the workers");
  const graceMs = o.config.limits.shutdownGraceSeconds * 1000 + 15_000;
  await Promise.all(
    [...born.keys()].map(
      (worker) =>
        new Promise<void>((resolveExit) => {
          if (worker.isDead()) return resolveExit();
          const force = setTimeout(() => worker.process.kill("SIGKILL"), graceMs);
          worker.once("exit", () => {
            clearTimeout(force);
            resolveExit();
          });
          worker.process.kill("SIGTERM");
        }),
    ),
  );
  cluster.off("exit", onExit);
  stopScrapes();
}
