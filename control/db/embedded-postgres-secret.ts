/**
 * The password of the embedded PostgreSQL's superuser. The server listens on 127.0.0.1, where
 * every local user can reach it, so the password is the only thing between them and every
 * Control table (and, as a superuser, `COPY … TO PROGRAM`): it is made at random at the
 * first start, kept in the data directory (`postgres-password`, mode 0600, owned by the user
 * running Control) and reused by every later start.
 *
 * Versions before this one used the fixed password `agent-control`. A data directory they
 * made gets a random one at its first start by this version: the new password is written to
 * `postgres-password.new` first, set with `ALTER USER` while logged in with the old one, and
 * only then becomes `postgres-password`, so a start that stops halfway is finished by the
 * next one.
 */
import { randomBytes } from "node:crypto";
import { chmod, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The file in the data directory holding the superuser's password. */
export const PASSWORD_FILE = "postgres-password";

/** The password every version before this one gave the superuser. */
export const LEGACY_PASSWORD = "agent-control";

/** The superuser's password, and whether the cluster may still have another one. */
export interface SuperuserSecret {
  readonly password: string;
  /**
   * True while the password is only proposed (`postgres-password.new`): the cluster may
   * still be on {@link LEGACY_PASSWORD} until {@link settleSecret} records it.
   */
  readonly pending: boolean;
}

/** Thrown for a password file Control cannot use; the message is one line. */
export class SecretFileError extends Error {}

/**
 * The password in `<dataDir>/postgres-password`; without that file, the one proposed in
 * `postgres-password.new` (a start that stopped halfway), else a new random one written
 * there (mode 0600). A password file readable by others is made 0600 again.
 */
export async function readOrProposeSecret(dataDir: string): Promise<SuperuserSecret> {
  const settled = await readSecretFile(join(dataDir, PASSWORD_FILE));
  if (settled !== undefined) return { password: settled, pending: false };
  const proposedFile = join(dataDir, `${PASSWORD_FILE}.new`);
  const proposed = await readSecretFile(proposedFile);
  if (proposed !== undefined) return { password: proposed, pending: true };
  // 32 random bytes in base64url: nothing to quote in a URL or an SQL literal.
  const password = randomBytes(32).toString("base64url");
  await writeFile(proposedFile, `${password}\n`, { mode: 0o600, flag: "wx" });
  return { password, pending: true };
}

/** Records a proposed password as the cluster's (`.new` becomes `postgres-password`). */
export async function settleSecret(dataDir: string, secret: SuperuserSecret): Promise<void> {
  if (!secret.pending) return;
  await rename(join(dataDir, `${PASSWORD_FILE}.new`), join(dataDir, PASSWORD_FILE));
}

/** The `ALTER USER` statement that gives `user` the password of `secret`. */
export function alterPasswordSql(user: string, secret: SuperuserSecret): string {
  if (!/^[A-Za-z0-9_-]+$/.test(secret.password)) {
    throw new SecretFileError("the proposed PostgreSQL password has unexpected characters");
  }
  return `ALTER USER "${user.replaceAll('"', '""')}" PASSWORD '${secret.password}'`;
}

/** The file's password, undefined when there is no file; 0600 is restored on the way. */
async function readSecretFile(path: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new SecretFileError(
      `cannot read ${path} (${code ?? "unreadable"}): it must belong to the user running Control`,
    );
  }
  const password = text.trim();
  if (password === "") {
    throw new SecretFileError(`${path} is empty (it holds the embedded PostgreSQL's password)`);
  }
  const mode = (await stat(path)).mode & 0o777;
  if (mode !== 0o600) await chmod(path, 0o600);
  return password;
}
