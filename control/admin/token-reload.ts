/**
 * Rotating admin tokens without a restart: the admin tokens file is re-read on request
 * (`main.ts` asks on SIGHUP) and, when it is valid, its tokens replace the file's previous
 * ones in the {@link AdminTokenTable} the admin server reads. A file that cannot be read, is
 * not valid, or clashes with the operator token or the config's tokens is logged and
 * changes nothing: the tokens in force stay.
 */
import { clashes, OPERATOR_TOKEN_NAME, readAdminTokensFile } from "../admin-token-list.js";
import { sha256OfText } from "../auth/secrets.js";
import type { AdminTokensFile } from "../config-checks.js";
import type { ConfiguredAdminToken } from "../config-reader.js";
import type { Logger } from "../log.js";
import { AdminTokenTable, tokenEntries } from "./auth.js";

/** What one reload did. */
export type TokenReload =
  /** The file's tokens are in force; `names` are every token's names, the operator's included. */
  | { readonly ok: true; readonly names: readonly string[] }
  /** Nothing changed: no tokens file is configured, or it has these problems. */
  | { readonly ok: false; readonly problems: readonly string[] };

/** Options of {@link createTokenReloader}. */
export interface TokenReloaderOptions {
  readonly operatorToken: string;
  /** The config's `adminTokens`: fixed for the life of the process. */
  readonly configured: readonly ConfiguredAdminToken[];
  /** The tokens file as read at start; undefined when none is configured. */
  readonly file: AdminTokensFile | undefined;
  readonly log: Logger;
}

/** The token table and the way to re-read the tokens file into it. */
export interface TokenReloader {
  /** The table to hand to the admin server. */
  readonly table: AdminTokenTable;
  /**
   * Re-reads the tokens file and returns what happened; logs it too unless `quiet` (a
   * cluster's worker asked by its primary, which logs one line for every worker). Never throws.
   */
  reload(options?: { readonly quiet?: boolean }): TokenReload;
}

/** Builds the table from the operator token, the config's tokens and the file's, as read at start. */
export function createTokenReloader(options: TokenReloaderOptions): TokenReloader {
  const log = options.log.child({ component: "admin-tokens" });
  const entriesWith = (fileTokens: readonly ConfiguredAdminToken[]) =>
    tokenEntries(options.operatorToken, [...options.configured, ...fileTokens]);
  const table = new AdminTokenTable(entriesWith(options.file?.tokens ?? []));
  const reload = ({ quiet = false }: { readonly quiet?: boolean } = {}): TokenReload => {
    const path = options.file?.path;
    if (path === undefined) {
      const problems = ["no admin tokens file is configured (adminTokensFile)"];
      if (!quiet) log.warn({ problems }, "admin tokens not reloaded");
      return { ok: false, problems };
    }
    const read = readAdminTokensFile(path);
    const problems = read.ok
      ? clashes([
          {
            source: "the operator token",
            tokens: [{ name: OPERATOR_TOKEN_NAME, sha256: sha256OfText(options.operatorToken) }],
          },
          { source: "adminTokens", tokens: options.configured },
          { source: `adminTokensFile ${path}`, tokens: read.tokens },
        ])
      : read.problems;
    if (!read.ok || problems.length > 0) {
      if (quiet) return { ok: false, problems };
      log.error(
        { path, problems, kept: table.entries.map((e) => e.name) },
        "admin tokens file not reloaded: the tokens in force stay",
      );
      return { ok: false, problems };
    }
    table.replace(entriesWith(read.tokens));
    const names = table.entries.map((e) => e.name);
    if (!quiet) log.info({ path, tokens: names }, "admin tokens reloaded");
    return { ok: true, names };
  };
  return { table, reload };
}
