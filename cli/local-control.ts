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
  const alive = options.alive ?? isAlive;
  const root = nearestDataDir(cwd);
  if (root === undefined) return DEFAULT_DATA_DIR;
  const port = portOf(server);
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const dir of [root, ...subdirectories(root)]) {
    const endpoint = readAdminEndpoint(dir);
    if (endpoint === undefined || portOf(endpoint.url) !== port || !alive(endpoint.pid)) continue;
    const mtimeMs = statSync(join(dir, "admin-endpoint.json")).mtimeMs;
    if (best === undefined || mtimeMs > best.mtimeMs) best = { dir, mtimeMs };
  }
  const found = best?.dir ?? root;
  const shown = relative(cwd, found);
  return shown.startsWith("..") ? found : shown;
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
