/**
 * Finds the data directory of the Control on this machine that answers at a local server
 * URL, so agentctl can read that Control's operator token without being told where it is
 * (after `npm start` the token is in `.data/admin-token`; after `npm run demo`, in
 * `.data/demo/admin-token`). Each running Control notes its admin URL and pid in
 * `<dataDir>/admin-endpoint.json`; this reads those notes, never a token of another port.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { readAdminEndpoint } from "../control/shared/local-endpoint.js";

/** The folder name Control uses for its data when `AGENT_CONTROL_DATA_DIR` is not set. */
export const DEFAULT_DATA_DIR = ".data";

/** Options of {@link findLocalDataDir}; the defaults look at this machine. */
export interface FindLocalDataDirOptions {
  /** Where the search starts (default: the current directory). */
  readonly cwd?: string;
  /** Whether a process is running (default: `kill(pid, 0)`). */
  readonly alive?: (pid: number) => boolean;
}

/**
 * The data directory whose Control serves `server`: the nearest `.data` folder in `cwd` or
 * a folder above it, and the folders directly inside it, are searched for a note of a live
 * Control on the server's port (the newest note wins). Without one, that `.data` folder
 * (or `.data` when there is none). The result is relative to `cwd` when it lies below it.
 */
export function findLocalDataDir(server: string, options: FindLocalDataDirOptions = {}): string {
  const cwd = resolve(options.cwd ?? process.cwd());
  const root = nearestDataDir(cwd);
  if (root === undefined) return DEFAULT_DATA_DIR;
  return shown(cwd, notedIn(root, server, options.alive ?? isAlive) ?? root);
}

/**
 * The data directory that a live Control noted for `server`'s port, searched as
 * {@link findLocalDataDir} does; undefined when no running Control here noted that port.
 */
export function findNotedDataDir(
  server: string,
  options: FindLocalDataDirOptions = {},
): string | undefined {
  const cwd = resolve(options.cwd ?? process.cwd());
  const root = nearestDataDir(cwd);
  if (root === undefined) return undefined;
  const noted = notedIn(root, server, options.alive ?? isAlive);
  return noted === undefined ? undefined : shown(cwd, noted);
}

/**
 * The data directory whose Control noted the admin socket `socket` (absolute), searched as
 * {@link findLocalDataDir} does; its process need not be alive (the socket tells). Undefined
 * when no note here names that socket.
 */
export function findSocketDataDir(
  socket: string,
  options: Omit<FindLocalDataDirOptions, "alive"> = {},
): string | undefined {
  const cwd = resolve(options.cwd ?? process.cwd());
  const root = nearestDataDir(cwd);
  if (root === undefined) return undefined;
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const dir of [root, ...subdirectories(root)]) {
    if (readAdminEndpoint(dir)?.socket !== socket) continue;
    const mtimeMs = statSync(join(dir, "admin-endpoint.json")).mtimeMs;
    if (best === undefined || mtimeMs > best.mtimeMs) best = { dir, mtimeMs };
  }
  return best === undefined ? undefined : shown(cwd, best.dir);
}

/** The newest note of a live Control on `server`'s port in `root` or a folder inside it. */
function notedIn(root: string, server: string, alive: (pid: number) => boolean) {
  const port = portOf(server);
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const dir of [root, ...subdirectories(root)]) {
    const endpoint = readAdminEndpoint(dir);
    if (endpoint === undefined || portOf(endpoint.url) !== port || !alive(endpoint.pid)) continue;
    const mtimeMs = statSync(join(dir, "admin-endpoint.json")).mtimeMs;
    if (best === undefined || mtimeMs > best.mtimeMs) best = { dir, mtimeMs };
  }
  return best?.dir;
}

/** `dir` relative to `cwd` when it lies below it, else as it is. */
function shown(cwd: string, dir: string): string {
  const rel = relative(cwd, dir);
  return rel.startsWith("..") ? dir : rel;
}

/** `.data` in `dir` or the nearest folder above it that has one. */
function nearestDataDir(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, DEFAULT_DATA_DIR);
    if (isDirectory(candidate)) return candidate;
    if (dirname(at) === at) return undefined;
  }
}

function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name))
      .sort();
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The URL's port, the scheme's default when none is written. */
function portOf(url: string): string {
  const parsed = new URL(url);
  return parsed.port || (parsed.protocol === "https:" ? "443" : "80");
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
