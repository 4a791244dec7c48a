/**
 * Files Control reads a secret from must be Control's own: a file other users may read gives
 * them the secret, one they may write lets them replace it. The same check, with the same one
 * line naming the file and the fix, for every such file: the admin tokens file, a config file
 * that carries secrets ({@link configFileSecrets}), and the TUF online keys. Control refuses to
 * start (or to reload) with such a file.
 */
import { statSync } from "node:fs";

/**
 * Why the file at `path` is not safe to hold `holds` (e.g. "admin credentials"): other users
 * may read or write it (any group or other permission bit), or it belongs to a user other than
 * this process's and root (that user could rewrite it). Undefined when safe, or when it cannot
 * be stat'ed (the read that follows says why).
 */
export function exposedFileProblem(path: string, holds: string): string | undefined {
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = statSync(path));
  } catch {
    return undefined;
  }
  const permissions = mode & 0o777;
  if ((permissions & 0o077) !== 0) {
    return `other users may read or write it (mode ${permissions.toString(8)}); it holds ${holds}: chmod 600 ${path}`;
  }
  const self = process.getuid?.();
  if (self !== undefined && uid !== self && uid !== 0) {
    return `it belongs to uid ${uid}, not to Control's user (uid ${self}) or root, who could rewrite it: chown it to Control's user`;
  }
  return undefined;
}

/**
 * True when a parsed config file carries a secret: `adminToken`, an `adminTokens` entry with a
 * plain `token` (a `sha256` is no secret), or a `databaseUrl` with a password.
 */
export function configFileSecrets(file: Readonly<Record<string, unknown>>): boolean {
  if (typeof file.adminToken === "string" && file.adminToken !== "") return true;
  const tokens = file.adminTokens;
  if (Array.isArray(tokens)) {
    const plain = tokens.some(
      (t) =>
        typeof t === "object" && t !== null && typeof (t as { token?: unknown }).token === "string",
    );
    if (plain) return true;
  }
  if (typeof file.databaseUrl === "string") {
    try {
      if (new URL(file.databaseUrl).password !== "") return true;
    } catch {
      // Not a URL: the config's own check says so.
    }
  }
  return false;
}
