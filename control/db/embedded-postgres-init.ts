/**
 * The steps of an embedded PostgreSQL start that need care about users: the `postgres`
 * account a root Control runs the server as, a first `initdb` whose password file no other
 * user can read, and the one-line error a start that cannot work ends with.
 */
import { execFile } from "node:child_process";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { ConfigError } from "../config.js";
import { lookupAccount, POSTGRES_USER } from "./postgres-user-access.js";

const run = promisify(execFile);

/**
 * The embedded PostgreSQL could not start, for a reason stated in one line (with what to
 * do); `main.ts` prints it as it prints a bad setting, and exits 2.
 */
export class EmbeddedPostgresError extends ConfigError {
  constructor(dataDir: string, reason: string) {
    super([`dataDir: ${JSON.stringify(dataDir)} ${reason.replaceAll(/\s*\n\s*/g, " ")}`]);
    this.name = "EmbeddedPostgresError";
  }
}

/**
 * Runs `initdb` with its password file (which the package writes to `os.tmpdir()`, readable
 * by every user with the default umask) in a directory of the data dir that only the
 * server's user may enter, and removes that directory afterwards.
 */
export async function initialisePrivately(
  server: { initialise(): Promise<void> },
  dataDir: string,
  root: boolean,
): Promise<void> {
  const privateDir = await mkdtemp(join(resolve(dataDir), ".initdb-"));
  const saved = process.env.TMPDIR;
  try {
    await chmod(privateDir, 0o700);
    if (root) await chown(privateDir, lookupAccount(POSTGRES_USER).uid ?? -1, -1);
    process.env.TMPDIR = privateDir;
    await server.initialise();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await rm(privateDir, { recursive: true, force: true });
  }
}

/** As root: the `postgres` account the server runs as, created (a system account) if missing. */
export async function ensurePostgresAccount(dataDir: string): Promise<void> {
  if (lookupAccount(POSTGRES_USER).uid !== undefined) return;
  try {
    await run("groupadd", ["--system", POSTGRES_USER]).catch((error: { code?: unknown }) => {
      if (error.code !== 9) throw error; // 9: the group exists
    });
    await run("useradd", [
      ...["--system", "--gid", POSTGRES_USER, "--no-create-home"],
      ...["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", POSTGRES_USER],
    ]);
  } catch (error) {
    const detail = String((error as { stderr?: string }).stderr ?? (error as Error).message);
    throw new EmbeddedPostgresError(
      dataDir,
      `cannot hold the embedded PostgreSQL: Control runs as root, so the server runs as user "${POSTGRES_USER}", which could not be created (${detail.trim().split("\n")[0]}); fix: create it (useradd --system ${POSTGRES_USER}), run Control as an unprivileged user, or set DATABASE_URL`,
    );
  }
}
