/**
 * Where Control reaches its embedded PostgreSQL: a Unix socket in `<dataDir>/run`, a directory
 * of mode 0700 owned by the server's user, and no TCP port at all (`listen_addresses=''`). A
 * TCP port on loopback could be bound first by any local user (the server down, or slow to
 * start), who would then receive Control's connection and, by asking for clear-text password
 * authentication, the password; no other user may enter the socket's directory, so none can
 * put a socket there or reach the one there.
 */
import { chmod, chown, lstat, mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { EmbeddedPostgresError } from "./embedded-postgres-init.js";
import { lookupAccount, POSTGRES_USER } from "./postgres-user-access.js";

/** The socket's directory under the data directory. */
export const SOCKET_DIR = "run";

/**
 * The default port number; with no TCP listener it only names the socket file
 * (`.s.PGSQL.5432`, as `psql -h <dataDir>/run` expects by default).
 */
export const SOCKET_PORT = 5432;

/**
 * The longest socket path the system accepts, in bytes, without its final NUL: `sun_path` is
 * 108 bytes on Linux and 104 on macOS and the BSDs.
 */
export const SOCKET_PATH_MAX = process.platform === "linux" ? 107 : 103;

/** The socket's directory for the data directory `dataDir` (absolute). */
export function socketDirOf(dataDir: string): string {
  return join(resolve(dataDir), SOCKET_DIR);
}

/**
 * Why the socket of `dataDir` cannot be made, in words that follow the data directory's name,
 * or undefined when it can: its path, with the longest port number, must fit a Unix socket
 * address. Checked before anything starts, so a data dir once accepted always is.
 */
export function socketPathProblem(dataDir: string): string | undefined {
  const path = join(socketDirOf(dataDir), ".s.PGSQL.65535");
  const bytes = Buffer.byteLength(path);
  if (bytes <= SOCKET_PATH_MAX) return undefined;
  return (
    `cannot hold the embedded PostgreSQL: its Unix socket ${path} would be ${bytes} bytes long, ` +
    `over the ${SOCKET_PATH_MAX} bytes a socket path may have; fix: use a shorter data ` +
    "directory (e.g. AGENT_CONTROL_DATA_DIR=/var/lib/agent-control), or set DATABASE_URL"
  );
}

/** The server's flags: no TCP listener, the socket in `socketDir` only. */
export function socketFlags(socketDir: string): string[] {
  // A quoted entry of PostgreSQL's comma-separated list may hold commas and spaces.
  const quoted = `"${socketDir.replaceAll('"', '""')}"`;
  return ["-c", "listen_addresses=", "-c", `unix_socket_directories=${quoted}`];
}

/**
 * Makes the socket's directory (mode 0700, owned by the server's user: `postgres` when Control
 * runs as root, else Control's own user), and refuses one that is not a plain directory
 * (a symbolic link, a file) or that belongs to another user Control cannot take it from.
 */
export async function ensureSocketDir(dataDir: string, root: boolean): Promise<void> {
  const dir = socketDirOf(dataDir);
  await mkdir(dir, { mode: 0o700 }).catch((error: { code?: string }) => {
    if (error.code !== "EEXIST") throw error;
  });
  const found = await lstat(dir);
  if (!found.isDirectory()) {
    throw new EmbeddedPostgresError(
      dataDir,
      `cannot hold the embedded PostgreSQL: ${dir}, the directory of its socket, is not a directory; fix: remove it`,
    );
  }
  const uid = root ? lookupAccount(POSTGRES_USER).uid : process.getuid?.();
  if (root && uid !== undefined) await chown(dir, uid, -1);
  else if (uid !== undefined && found.uid !== uid) {
    throw new EmbeddedPostgresError(
      dataDir,
      `cannot hold the embedded PostgreSQL: ${dir}, the directory of its socket, belongs to uid ${found.uid}, not to the user running Control (uid ${uid}); fix: remove it`,
    );
  }
  await chmod(dir, 0o700);
}
