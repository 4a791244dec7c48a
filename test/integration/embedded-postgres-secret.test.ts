/**
 * The embedded PostgreSQL's superuser has a secret of its own: a random password made at the
 * first start in the data directory (`postgres-password`, mode 0600, owned by the user
 * running Control) and reused afterwards. Another local user cannot read it, cannot reach
 * the server (no TCP port; its socket's directory is closed to other users), and even the
 * users who may enter that directory must give the password. A data directory made by an
 * earlier version, still on the fixed password, has it changed at its first start by this one.
 *
 * "Another local user" is `nobody`, so the attempts need root to switch to it.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EmbeddedDatabase,
  startEmbeddedPostgres,
} from "../../control/db/embedded-postgres.js";

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
const LEGACY_PASSWORD = "agent-control";

/** What `nobody` achieves against the server at `url` and the password file. */
async function asNobody(url: string, passwordFile: string): Promise<Record<string, string>> {
  const port = portOf(url);
  const socketDir = socketDirOf(url);
  const script = `
    const pg = require("pg");
    const fs = require("fs");
    (async () => {
      const out = {};
      let stolen;
      try { stolen = fs.readFileSync(${JSON.stringify(passwordFile)}, "utf8").trim(); out.read = "read"; }
      catch (e) { out.read = e.code; }
      const tries = {
        legacy: { host: ${JSON.stringify(socketDir)}, password: ${JSON.stringify(LEGACY_PASSWORD)} },
        guess: { host: ${JSON.stringify(socketDir)}, password: "postgres" },
        tmp: { host: "/tmp", password: ${JSON.stringify(LEGACY_PASSWORD)} },
        tcp: { host: "127.0.0.1", password: ${JSON.stringify(LEGACY_PASSWORD)} },
        stolen: { host: ${JSON.stringify(socketDir)}, password: stolen ?? "none" },
      };
      for (const [name, t] of Object.entries(tries)) {
        const c = new pg.Client({ ...t, port: ${port}, user: "postgres", database: "postgres",
          connectionTimeoutMillis: 5000 });
        c.on("error", () => {});
        try { await c.connect(); out[name] = "connected"; await c.end(); }
        catch (e) { out[name] = e.code ?? String(e.message); c.end().catch(() => {}); }
      }
      process.stdout.write(JSON.stringify(out), () => process.exit(0));
    })();`;
  const { stdout } = await run(
    "setpriv",
    ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, "-e", script],
    { cwd: process.cwd(), env: { PATH: process.env.PATH ?? "" }, timeout: 60_000 },
  );
  return JSON.parse(stdout) as Record<string, string>;
}

async function query(url: string, sql: string): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** "connected", or the error code of a login to the server at `url` with `password`. */
async function loginCode(url: string, password: string): Promise<string> {
  const parsed = new URL(url);
  parsed.password = encodeURIComponent(password);
  const client = new pg.Client({ connectionString: parsed.toString() });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.end();
    return "connected";
  } catch (error) {
    await client.end().catch(() => {});
    return String((error as { code?: string }).code ?? (error as Error).message);
  }
}

const portOf = (url: string) => Number(new URL(url).port);
const socketDirOf = (url: string) => decodeURIComponent(new URL(url).hostname);
const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

describe.skipIf(!asRoot)("the embedded PostgreSQL's secret", { timeout: 180_000 }, () => {
  let base = "";
  let db: EmbeddedDatabase | undefined;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "pg-secret-"));
    // The server runs as `postgres` (Control is root here): it must reach the data dir.
    await chmod(base, 0o755);
  });
  afterAll(async () => {
    await db?.stop();
    await rm(base, { recursive: true, force: true });
  });

  it("is a random password in the data dir (0600, the user's own) that another user can neither read nor replace", async () => {
    const dataDir = join(base, "fresh");
    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    const passwordFile = join(dataDir, "postgres-password");
    const password = passwordOf(db.url);
    expect(password).not.toBe(LEGACY_PASSWORD);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect((await readFile(passwordFile, "utf8")).trim()).toBe(password);
    const file = await stat(passwordFile);
    expect(file.mode & 0o777).toBe(0o600);
    expect(file.uid).toBe(process.getuid?.());

    const nobody = await asNobody(db.url, passwordFile);
    expect(nobody).toEqual({
      read: "EACCES",
      legacy: "EACCES",
      guess: "EACCES",
      tmp: expect.not.stringMatching(/^connected$/),
      tcp: "ECONNREFUSED",
      stolen: "EACCES",
    });
    // Who may enter the socket's directory still gives the password (SCRAM over the socket).
    expect(await loginCode(db.url, LEGACY_PASSWORD)).toBe("28P01");
    expect(await loginCode(db.url, "postgres")).toBe("28P01");
    expect(await loginCode(db.url, password)).toBe("connected");

    // The next start reuses it.
    await db.stop();
    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    expect(passwordOf(db.url)).toBe(password);
    await query(db.url, "select 1");
    await db.stop();
    db = undefined;
  });

  it("replaces the fixed password of a data dir an earlier version made, at its first start", async () => {
    const dataDir = join(base, "earlier");
    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    // The data dir as an earlier version left it: the fixed password, no password file.
    await query(db.url, `alter user postgres password '${LEGACY_PASSWORD}'`);
    await db.stop();
    await rm(join(dataDir, "postgres-password"));

    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    expect(passwordOf(db.url)).not.toBe(LEGACY_PASSWORD);
    await query(db.url, "select 1");
    const file = await stat(join(dataDir, "postgres-password"));
    expect(file.mode & 0o777).toBe(0o600);
    expect(await loginCode(db.url, LEGACY_PASSWORD)).toBe("28P01");
    const nobody = await asNobody(db.url, join(dataDir, "postgres-password"));
    expect(nobody.legacy).toBe("EACCES");
    expect(nobody.read).toBe("EACCES");
    await db.stop();
    db = undefined;
  });
});
