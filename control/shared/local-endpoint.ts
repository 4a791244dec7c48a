/**
 * The note a running Control leaves in its data directory, next to the operator token, so
 * that `agentctl` on the same machine can tell which data directory belongs to the Control
 * answering on a port, and where its admin Unix socket is: `<dataDir>/admin-endpoint.json`,
 * `{"url", "pid", "socket"}`. It holds no secret; the token stays in `<dataDir>/admin-token`
 * (mode 0600), and agentctl sends that token over the socket only (security review finding 6).
 */
import { readFileSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/** The file's name inside the data directory. */
export const ADMIN_ENDPOINT_FILE = "admin-endpoint.json";

/**
 * The directory of the admin socket under the data directory, mode 0700, Control's user's.
 * Not `run`, the embedded PostgreSQL's socket directory: run as root, Control gives that one
 * to the `postgres` user, who must not be able to replace the admin socket.
 */
export const ADMIN_SOCKET_DIR = "control-run";

/** The admin socket's file name. */
export const ADMIN_SOCKET_FILE = "admin.sock";

/**
 * The longest Unix socket path the system accepts, in bytes, without its final NUL: `sun_path`
 * is 108 bytes on Linux and 104 on macOS and the BSDs (as for the embedded PostgreSQL's socket).
 */
export const UNIX_SOCKET_PATH_MAX = process.platform === "linux" ? 107 : 103;

/** The default admin socket of the data directory `dataDir`: `<dataDir>/control-run/admin.sock`, absolute. */
export function adminSocketOf(dataDir: string): string {
  return join(resolve(dataDir), ADMIN_SOCKET_DIR, ADMIN_SOCKET_FILE);
}

/** Where a Control on this machine serves its admin API, and which process it is. */
export interface AdminEndpoint {
  /** The admin API's base URL (`http://127.0.0.1:7080`), its port the one actually bound. */
  readonly url: string;
  /** The Control process that wrote the note; a note whose process is gone is stale. */
  readonly pid: number;
  /** The admin API's Unix socket (absolute path); absent in a note of an older Control. */
  readonly socket?: string;
}

/** Writes the note atomically (a reader never sees half of it). */
export async function writeAdminEndpoint(dataDir: string, endpoint: AdminEndpoint): Promise<void> {
  const path = join(dataDir, ADMIN_ENDPOINT_FILE);
  const partial = `${path}.${endpoint.pid}.tmp`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(partial, `${JSON.stringify(endpoint)}\n`, { mode: 0o644 });
  await rename(partial, path);
}

/** The note in `dataDir`, or undefined when there is none or it is not one. */
export function readAdminEndpoint(dataDir: string): AdminEndpoint | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dataDir, ADMIN_ENDPOINT_FILE), "utf8")) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const { url, pid, socket } = value as Record<string, unknown>;
    if (typeof url !== "string" || typeof pid !== "number" || !Number.isInteger(pid)) {
      return undefined;
    }
    new URL(url);
    return typeof socket === "string" && socket.startsWith("/")
      ? { url, pid, socket }
      : { url, pid };
  } catch {
    return undefined;
  }
}
