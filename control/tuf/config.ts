/**
 * The `tuf` config section: where the release channel's TUF repository lives and the
 * online keys Control signs its snapshot and timestamp with. Absent: no `/tuf/` is served.
 *
 * ```json
 * "tuf": { "dir": "/etc/agent-control/tuf", "snapshotKey": "/etc/agent-control/snapshot.key",
 *          "timestampKey": "/etc/agent-control/timestamp.key", "timestampExpirySeconds": 86400 }
 * ```
 */
import { readFileSync, statSync } from "node:fs";
import { exposedFileProblem } from "../config-secret-files.js";
import { isReleaseError, parsePrivateKey } from "../shared/release/index.js";

/** The validated section, keys read. */
export interface TufConfig {
  /** The repository directory (root.json, N.root.json, targets.json from `agentctl tuf`). */
  readonly dir: string;
  readonly snapshotKey: Uint8Array;
  readonly timestampKey: Uint8Array;
  /** How long each signed timestamp is valid (default 1 day). */
  readonly timestampExpirySeconds: number;
  /** A new timestamp is signed this often (default 1 hour, below the expiry). */
  readonly timestampWindowSeconds: number;
}

const KEYS = [
  "dir",
  "snapshotKey",
  "timestampKey",
  "timestampExpirySeconds",
  "timestampWindowSeconds",
];

/** Validates `tuf`, pushing one problem per bad value; undefined when absent or invalid. */
export function readTufConfig(input: unknown, problems: string[]): TufConfig | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    problems.push("tuf: must be an object with dir, snapshotKey and timestampKey");
    return undefined;
  }
  const section = input as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(section)) {
    if (!KEYS.includes(key)) problems.push(`tuf.${key}: unknown setting`);
  }
  const dir = section.dir;
  if (typeof dir !== "string" || dir === "") {
    problems.push("tuf.dir: required, the repository directory agentctl tuf writes");
  } else {
    try {
      if (!statSync(dir).isDirectory()) problems.push(`tuf.dir: ${dir} is not a directory`);
      statSync(`${dir}/root.json`);
      statSync(`${dir}/targets.json`);
    } catch {
      problems.push(`tuf.dir: ${dir} must hold root.json and targets.json (agentctl tuf init)`);
    }
  }
  const key = (name: "snapshotKey" | "timestampKey"): Uint8Array => {
    const file = section[name];
    if (typeof file !== "string" || file === "") {
      problems.push(`tuf.${name}: required, a key file from agentctl release keygen`);
      return new Uint8Array();
    }
    const exposed = exposedFileProblem(file, "a private key");
    if (exposed) {
      problems.push(`tuf.${name}: ${exposed}`);
      return new Uint8Array();
    }
    try {
      return parsePrivateKey(readFileSync(file, "utf8"));
    } catch (error) {
      const reason = isReleaseError(error)
        ? error.message
        : `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`;
      problems.push(`tuf.${name}: ${file} ${reason}`);
      return new Uint8Array();
    }
  };
  const seconds = (name: string, fallback: number, min: number, max: number): number => {
    const value = section[name];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      problems.push(
        `tuf.${name}: must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      );
      return fallback;
    }
    return value;
  };
  const snapshotKey = key("snapshotKey");
  const timestampKey = key("timestampKey");
  const timestampExpirySeconds = seconds("timestampExpirySeconds", 86_400, 60, 31 * 86_400);
  const timestampWindowSeconds = seconds("timestampWindowSeconds", 3600, 1, 86_400);
  if (timestampWindowSeconds * 2 > timestampExpirySeconds) {
    problems.push(
      "tuf.timestampWindowSeconds: must be at most half of tuf.timestampExpirySeconds (a timestamp is re-signed well before it expires)",
    );
  }
  if (problems.length > before) return undefined;
  return {
    dir: dir as string,
    snapshotKey,
    timestampKey,
    timestampExpirySeconds,
    timestampWindowSeconds,
  };
}
