/**
 * The note a running Control leaves in its data directory, next to the operator token, so
 * that `agentctl` on the same machine can tell which data directory belongs to the Control
 * answering on a port: `<dataDir>/admin-endpoint.json`, `{"url", "pid"}`. It holds no
 * secret; the token stays in `<dataDir>/admin-token` (mode 0600).
 */
import { readFileSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The file's name inside the data directory. */
export const ADMIN_ENDPOINT_FILE = "admin-endpoint.json";

/** Where a Control on this machine serves its admin API, and which process it is. */
export interface AdminEndpoint {
  /** The admin API's base URL (`http://127.0.0.1:7080`), its port the one actually bound. */
  readonly url: string;
  /** The Control process that wrote the note; a note whose process is gone is stale. */
  readonly pid: number;
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
    const { url, pid } = value as Record<string, unknown>;
    if (typeof url !== "string" || typeof pid !== "number" || !Number.isInteger(pid)) {
      return undefined;
    }
    new URL(url);
    return { url, pid };
  } catch {
    return undefined;
  }
}
