/**
 * The admin API's Unix socket (`adminSocket`, default `<dataDir>/control-run/admin.sock`),
 * served beside the TCP listener by the same handler. agentctl sends the operator token it
 * reads from the data directory only there (security review finding 6): no other local user
 * can bind it first, because its directory is Control's user's and no one else may write it,
 * and only that user (and root) may connect, as only they may read the token file.
 *
 * With `--workers N` the primary prepares the path once, before it forks, and the workers
 * share the one socket as they share the TCP port (node:cluster hands the connections out);
 * a worker never removes it, which would unlink the socket its siblings serve.
 */
import cluster from "node:cluster";
import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { createConnection, type Server } from "node:net";
import { dirname } from "node:path";
import { ConfigError } from "../config.js";

/** How long a socket found at start has to accept a connection to count as a live Control's. */
const PROBE_MS = 1000;

/**
 * Makes the socket's directory (mode 0700) when missing and checks it: a plain directory of
 * Control's user (or root) that no group or other user may write. Removes a socket left by a
 * Control that is gone (nothing accepts on it). In a cluster worker it does nothing: the
 * primary did it before forking.
 * @throws ConfigError naming `adminSocket` when another Control answers there, or the path or
 * its directory cannot be trusted.
 */
export async function prepareAdminSocket(path: string): Promise<void> {
  if (cluster.isWorker) return;
  const problem = await socketProblem(path);
  if (problem !== undefined) throw new ConfigError([`adminSocket: ${problem}`]);
}

async function socketProblem(path: string): Promise<string | undefined> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const found = await lstat(dir);
  const uid = process.getuid?.();
  if (!found.isDirectory()) return `${dir}, the directory of ${path}, is not a directory`;
  if (uid !== undefined && found.uid !== uid && found.uid !== 0) {
    return `${dir}, the directory of ${path}, belongs to uid ${found.uid}, not to the user running Control (uid ${uid}); fix: remove it, or set adminSocket elsewhere`;
  }
  if ((found.mode & 0o022) !== 0) {
    return `${dir}, the directory of ${path}, may be written by other users (mode 0${(found.mode & 0o777).toString(8)}), who could put a socket of their own there; fix: chmod go-w ${dir}, or set adminSocket elsewhere`;
  }
  const existing = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (existing === undefined) return undefined;
  if (!existing.isSocket()) return `${path} exists and is not a socket; fix: remove it`;
  if (await answers(path)) {
    return `another Control answers on ${path}; stop it, or give this one another data directory or adminSocket`;
  }
  await unlink(path);
  return undefined;
}

/** True when something accepts a connection on the socket at `path` within {@link PROBE_MS}. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (live: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(live);
    };
    const timer = setTimeout(() => done(true), PROBE_MS);
    socket.once("connect", () => done(true));
    // ECONNREFUSED: a socket file nobody listens on (its Control was killed).
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code !== "ECONNREFUSED"));
  });
}

/** Listens on the socket at `path` (prepared by {@link prepareAdminSocket}), mode 0600. */
export async function listenAdminSocket(server: Server, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Only Control's user (and root) may connect; its directory keeps others out meanwhile.
  await chmod(path, 0o600);
}
