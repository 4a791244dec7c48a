/**
 * The parts of Control's configuration checked beyond their type: who may use the admin API
 * (the operator token, the configured tokens, the admin tokens file), the release pins, and
 * the data directory. Each is checked at start, before the embedded database or any
 * listener starts, with one problem per bad value.
 */
import {
  clashes,
  OPERATOR_TOKEN_NAME,
  readAdminTokenList,
  readAdminTokensFile,
} from "./admin-token-list.js";
import type { ConfigInput, ConfiguredAdminToken } from "./config-reader.js";
import { clusterOwnerProblem, postgresUserAccessProblem } from "./db/postgres-user-access.js";
import { HEADER_TOKEN_RULE, isHeaderToken } from "./shared/header-token.js";
import { parsePin } from "./shared/release/keys.js";
import { unusableDirectory } from "./shared/usable-directory.js";
import { TLS_ENV } from "./tls/config.js";

/** The admin tokens file as read at start; Control re-reads `path` on SIGHUP. */
export interface AdminTokensFile {
  readonly path: string;
  readonly tokens: readonly ConfiguredAdminToken[];
}

/** Who may call the admin API, from config and environment. */
export interface AdminAccess {
  /** The operator token from `AGENT_CONTROL_ADMIN_TOKEN`; generated on first start when undefined. */
  readonly adminToken: string | undefined;
  /** More admin tokens (viewers, named operators) from the config file. */
  readonly adminTokens: readonly ConfiguredAdminToken[];
  /** `adminTokensFile` / `AGENT_CONTROL_ADMIN_TOKENS_FILE`, read once here. */
  readonly adminTokensFile: AdminTokensFile | undefined;
}

/**
 * Reads `adminToken`, `adminTokens` and `adminTokensFile`. The operator token must be at
 * least 16 characters a header can carry; no two tokens, wherever configured, may share a
 * name or a secret.
 */
export function readAdminAccess(input: ConfigInput, problems: string[]): AdminAccess {
  let adminToken: string | undefined;
  const token = input.adminToken;
  if (token !== undefined) {
    if (typeof token !== "string" || token.length < 16) {
      problems.push("adminToken: must be a string of at least 16 characters");
    } else if (!isHeaderToken(token)) {
      problems.push(`adminToken: ${HEADER_TOKEN_RULE}`);
    } else {
      adminToken = token;
    }
  }
  const adminTokens = readAdminTokenList(input.adminTokens, "adminTokens", problems);
  let adminTokensFile: AdminTokensFile | undefined;
  const path = input.adminTokensFile;
  if (path !== undefined) {
    if (typeof path !== "string" || path === "") {
      problems.push("adminTokensFile: must be a file path");
    } else {
      const read = readAdminTokensFile(path);
      if (read.ok) adminTokensFile = { path, tokens: read.tokens };
      else problems.push(...read.problems);
    }
  }
  problems.push(
    ...clashes([
      { source: "the operator token", tokens: [{ name: OPERATOR_TOKEN_NAME, sha256: "" }] },
      { source: "adminTokens", tokens: adminTokens },
      { source: `adminTokensFile ${String(path)}`, tokens: adminTokensFile?.tokens ?? [] },
    ]),
  );
  return { adminToken, adminTokens, adminTokensFile };
}

/**
 * Release pins Control can verify with (each a well-formed ed25519 pin) and a threshold
 * they can meet: with pins set, more required signatures than pins could never be met.
 */
export function checkReleasePins(
  release: { readonly pins: readonly string[]; readonly threshold: number },
  problems: string[],
): void {
  release.pins.forEach((pin, index) => {
    try {
      parsePin(pin);
    } catch (error) {
      problems.push(`release.pins[${index}]: ${(error as Error).message}`);
    }
  });
  if (release.pins.length > 0 && release.threshold > release.pins.length) {
    problems.push(
      `release.threshold: ${release.threshold} signatures can never come from ${release.pins.length} pinned key(s)`,
    );
  }
}

/**
 * The data directory must be one Control can use or create (the database and secrets live
 * there) and, when it holds the embedded PostgreSQL (`embedded`) of a Control run as root,
 * one whose cluster and binaries the server's `postgres` user can reach; an existing
 * embedded cluster must belong to the user the server runs as (`postgres` as root, else the
 * user running Control).
 */
export function checkDataDir(dataDir: string, embedded: boolean, problems: string[]): void {
  const problem =
    unusableDirectory(dataDir) ??
    (embedded ? (postgresUserAccessProblem(dataDir) ?? clusterOwnerProblem(dataDir)) : undefined);
  if (problem !== undefined) problems.push(`dataDir: ${JSON.stringify(dataDir)} ${problem}`);
}

/** Config keys set by an environment variable, so a problem can name the variable. */
const ENV_KEYS: Readonly<Record<string, string>> = {
  DATABASE_URL: "databaseUrl",
  AGENT_CONTROL_DATA_DIR: "dataDir",
  AGENT_CONTROL_AGENT_ADDR: "agentAddr",
  AGENT_CONTROL_ADMIN_ADDR: "adminAddr",
  AGENT_CONTROL_ADMIN_TOKEN: "adminToken",
  AGENT_CONTROL_ADMIN_TOKENS_FILE: "adminTokensFile",
  AGENT_CONTROL_PUBLIC_URL: "publicUrl",
  AGENT_CONTROL_RELEASE_PINS: "release.pins",
  AGENT_CONTROL_RELEASE_THRESHOLD: "release.threshold",
  AGENT_CONTROL_LOG_LEVEL: "log.level",
  ...Object.fromEntries(
    Object.entries(TLS_ENV).map(([name, [listener, key]]) => [name, `tls.${listener}.${key}`]),
  ),
};

/**
 * `problems` with the environment variable named where it set the bad value
 * (`adminToken: … (from AGENT_CONTROL_ADMIN_TOKEN)`), and each made one line: a value with a
 * control character in it is shown escaped, so one bad value is one line of output.
 */
export function withSources(
  problems: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  return problems.map((problem) => {
    const source = Object.entries(ENV_KEYS).find(
      ([name, key]) =>
        env[name] !== undefined &&
        env[name] !== "" &&
        [":", "[", " "].some((next) => problem.startsWith(`${key}${next}`)),
    );
    const line = Array.from(problem, escapeControl).join("");
    return source ? `${line} (from ${source[0]})` : line;
  });
}

/** A control character as `\u000a`; any other character as it is. */
function escapeControl(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, "0")}` : c;
}

/**
 * A stream's byte burst must hold the largest message an Agent may send, or a message that
 * size could never be accepted.
 */
export function checkStreamBurst(
  limits: { readonly agentStreamBurstBytes: number; readonly maxAgentMessageBytes: number },
  problems: string[],
): void {
  if (limits.agentStreamBurstBytes < limits.maxAgentMessageBytes) {
    problems.push(
      `limits.agentStreamBurstBytes (${limits.agentStreamBurstBytes}) must be at least limits.maxAgentMessageBytes (${limits.maxAgentMessageBytes}): a message of the largest size allowed could never be accepted`,
    );
  }
}
