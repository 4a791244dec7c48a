/**
 * Admin tokens as configuration writes them: the config's `adminTokens` list and the admin
 * tokens file (`adminTokensFile` / `AGENT_CONTROL_ADMIN_TOKENS_FILE`), a JSON list of the same
 * entries that Control re-reads on SIGHUP. Each entry is `{name, role, token | sha256,
 * expires?}`; a token given in clear is hashed here and never kept.
 */
import { readFileSync } from "node:fs";
import { sha256OfText } from "./auth/secrets.js";
import { type ConfiguredAdminToken, isRecord } from "./config-reader.js";
import { exposedFileProblem } from "./config-secret-files.js";
import { HEADER_TOKEN_RULE, isHeaderToken } from "./shared/header-token.js";
import { parseRfc3339 } from "./shared/release/timestamp.js";

/** The name of the operator token (`AGENT_CONTROL_ADMIN_TOKEN` or `<data dir>/admin-token`). */
export const OPERATOR_TOKEN_NAME = "admin";

const ENTRY_KEYS = new Set(["name", "role", "token", "sha256", "expires"]);
const SHAPE = "{name, role, token or sha256, expires?}";
/** Printable, at most 64 characters: a name is shown in the audit log and in logs. */
const NAME = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;

/**
 * Reads a list of admin token entries, pushing one problem per bad value, named `name[i].key`.
 * Refused: an unknown key (a misspelt `expires` must not mean "never"), both or neither of
 * `token` and `sha256`, a clear token shorter than 16 characters or one no header can carry,
 * and an `expires` that is not RFC 3339. Names and secrets listed twice are for
 * {@link clashes}, which looks across every place tokens come from.
 */
export function readAdminTokenList(
  value: unknown,
  name: string,
  problems: string[],
): ConfiguredAdminToken[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`${name}: must be a list of ${SHAPE}`);
    return [];
  }
  const tokens: ConfiguredAdminToken[] = [];
  value.forEach((item: unknown, index) => {
    const token = readEntry(item, `${name}[${index}]`, problems);
    if (token) tokens.push(token);
  });
  return tokens;
}

function readEntry(
  item: unknown,
  at: string,
  problems: string[],
): ConfiguredAdminToken | undefined {
  if (!isRecord(item)) {
    problems.push(`${at}: must be an object ${SHAPE}`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(item)) {
    if (!ENTRY_KEYS.has(key)) problems.push(`${at}.${key}: unknown key (expected ${SHAPE})`);
  }
  const name = typeof item.name === "string" && NAME.test(item.name) ? item.name : undefined;
  if (!name) problems.push(`${at}.name: must be 1-64 printable characters`);
  const role = item.role === "viewer" || item.role === "operator" ? item.role : undefined;
  if (!role) problems.push(`${at}.role: must be "viewer" or "operator"`);
  let sha256: string | undefined;
  if ((item.token === undefined) === (item.sha256 === undefined)) {
    problems.push(`${at}: give exactly one of token and sha256`);
  } else if (item.token !== undefined) {
    if (typeof item.token !== "string" || item.token.length < 16) {
      problems.push(`${at}.token: must be a string of at least 16 characters`);
    } else if (!isHeaderToken(item.token)) {
      problems.push(`${at}.token: ${HEADER_TOKEN_RULE}`);
    } else {
      sha256 = sha256OfText(item.token);
    }
  } else if (typeof item.sha256 === "string" && /^[0-9a-f]{64}$/.test(item.sha256)) {
    sha256 = item.sha256;
  } else {
    problems.push(`${at}.sha256: must be the lower-case hex SHA-256 of the token`);
  }
  let expires: Date | undefined;
  if (item.expires !== undefined) {
    expires = typeof item.expires === "string" ? parseRfc3339(item.expires) : undefined;
    if (!expires) {
      problems.push(`${at}.expires: must be an RFC 3339 time such as 2030-01-31T12:00:00Z`);
    }
  }
  if (problems.length > before || !name || !role || !sha256) return undefined;
  return { name, role, sha256, expires };
}

/** Tokens from one place, for {@link clashes}. */
export interface TokenGroup {
  /** Where they come from, as a problem names it. */
  readonly source: string;
  readonly tokens: readonly Pick<ConfiguredAdminToken, "name" | "sha256">[];
}

/**
 * Problems with tokens that share a name (the audit log could not tell them apart) or a
 * secret (the role would depend on the order of the list), across all groups. The operator
 * token is named {@link OPERATOR_TOKEN_NAME}, so no other token may be.
 */
export function clashes(groups: readonly TokenGroup[]): string[] {
  const problems: string[] = [];
  const names = new Map<string, string>();
  const hashes = new Map<string, string>();
  for (const { source, tokens } of groups) {
    for (const token of tokens) {
      const named = names.get(token.name);
      if (named !== undefined) {
        problems.push(`${source}: the name "${token.name}" is already used by ${named}`);
      }
      names.set(token.name, named ?? `${source} "${token.name}"`);
      const same = hashes.get(token.sha256);
      if (same !== undefined) {
        problems.push(`${source}: "${token.name}" is the same token as ${same}`);
      }
      hashes.set(token.sha256, same ?? `${source} "${token.name}"`);
    }
  }
  return problems;
}

/** The outcome of reading the admin tokens file. */
export type TokensFileRead =
  | { readonly ok: true; readonly tokens: readonly ConfiguredAdminToken[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Reads the admin tokens file at `path`: a JSON list of {@link readAdminTokenList} entries.
 * Every problem is named `adminTokensFile PATH…`; nothing is thrown. A file other users may read
 * or write is refused (config-secret-files.ts).
 */
export function readAdminTokensFile(path: string): TokensFileRead {
  const label = `adminTokensFile ${path}`;
  const exposed = exposedFileProblem(path, "admin credentials");
  if (exposed) return { ok: false, problems: [`${label}: ${exposed}`] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code ? `cannot read it (${code})` : `not JSON (${(error as Error).message})`;
    return { ok: false, problems: [`${label}: ${why}`] };
  }
  const problems: string[] = [];
  const tokens = readAdminTokenList(parsed, label, problems);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tokens };
}
