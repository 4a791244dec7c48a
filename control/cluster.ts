/**
 * `npm start -- --workers N`: N Control processes on one machine, sharing the agent, admin and
 * downloads ports through `node:cluster` (the primary accepts connections and hands them to the
 * workers in turn). Each worker is a whole Control — its own agent streams, intake, delivery
 * and admin API; one of them leads the campaign worker through the lease — so they are the
 * active-active Controls of docs/decisions.md, on one host.
 *
 * The primary serves nothing itself. Before any worker starts it owns the database side: it
 * starts the embedded PostgreSQL when `DATABASE_URL` is unset (the workers get its URL),
 * applies the migrations once (workers starting together would race them), and settles the
 * operator token (a generated one is written once; each worker reads the file). It restarts a
 * worker that dies (after a second, longer while one keeps dying young), and on SIGTERM or
 * SIGINT it asks every worker to drain (SIGTERM), waits for them, and stops the database last.
 * A worker whose primary is gone (its IPC channel closed) drains and exits on its own.
 */
import cluster, { type Worker } from "node:cluster";
import { resolveOperatorToken } from "./admin/auth.js";
import type { ControlConfig } from "./config.js";
import { openDatabase } from "./db/database.js";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded-postgres.js";
import type { Logger } from "./log.js";

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

/** Runs the cluster's primary until SIGTERM or SIGINT; resolves once all has stopped. */
export async function runPrimary(o: PrimaryOptions): Promise<void> {
  const { config, log } = o;
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      onLog: (line) => log.debug({ component: "postgres" }, line),
    });
    url = embedded.url;
    log.info({ dataDir: config.dataDir }, "embedded PostgreSQL started");
  }
  try {
    const db = await openDatabase({ url, log });
    await db.close();
    const operator = await resolveOperatorToken(config.adminToken, config.dataDir);
    if (operator.source === "generated") {
      log.info({ path: operator.path }, "generated the operator admin token");
    }
    await supervise(o, url);
  } finally {
    await embedded?.stop();
  }
}

/** Forks the workers, restarts those that die, and stops them all on a signal. */
async function supervise(o: PrimaryOptions, databaseUrl: string): Promise<void> {
  const { log } = o;
  let stopping = false;
  let restartMs = FIRST_RESTART_MS;
  const born = new Map<Worker, number>();
  const fork = () => {
    if (stopping) return;
    const worker = cluster.fork({ DATABASE_URL: databaseUrl });
    born.set(worker, Date.now());
    o.say(`worker ${worker.process.pid} started`);
    log.info({ pid: worker.process.pid }, "worker started");
  };
  cluster.on("exit", (worker, code, signal) => {
    const lived = Date.now() - (born.get(worker) ?? 0);
    born.delete(worker);
    if (stopping) return;
    const delay = lived < YOUNG_MS ? restartMs : FIRST_RESTART_MS;
    restartMs = lived < YOUNG_MS ? Math.min(MAX_RESTART_MS, restartMs * 2) : FIRST_RESTART_MS;
    o.say(`worker ${worker.process.pid} died (${signal ?? `exit ${code}`}); another starts`);
    log.warn({ pid: worker.process.pid, code, signal, delayMs: delay }, "worker died; restarting");
    setTimeout(fork, delay);
  });
  for (let i = 0; i < o.workers; i++) fork();

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  stopping = true;
  log.info({ signal, workers: born.size }, "stopping the workers");
  const graceMs = o.config.limits.shutdownGraceSeconds * 1000 + 15_000;
  await Promise.all(
    [...born.keys()].map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          const force = setTimeout(() => worker.process.kill("SIGKILL"), graceMs);
          worker.once("exit", () => {
            clearTimeout(force);
            resolve();
          });
          worker.process.kill("SIGTERM");
        }),
    ),
  );
}
