/**
 * Control reaches its embedded PostgreSQL over a Unix socket in a directory of the data dir
 * that only the server's user may enter (`<dataDir>/run`, mode 0700), and the server opens no
 * TCP port: a local user who binds the port first (the server down, or slow to start) receives
 * no connection, so never the password (a fake server may ask for it in clear text, and pg
 * sends it). Security review finding 5.
 */
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile, readlink, rm, stat } from "node:fs/promises";
import { createConnection, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EmbeddedDatabase,
  freePort,
  loadEmbeddedPostgres,
  startEmbeddedPostgres,
} from "../../control/db/embedded-postgres.js";

const root = process.getuid?.() === 0;

/** The pid of the server running the cluster of `dataDir`, from its `postmaster.pid`. */
async function serverPid(dataDir: string): Promise<number> {
  const text = await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8");
  return Number.parseInt(text.split("\n")[0] ?? "", 10);
}

/** The TCP ports `pid` listens on, from its descriptors and /proc/net/tcp{,6}. */
async function tcpListenPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const lines = (await readFile(table, "utf8").catch(() => "")).split("\n").slice(1);
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (hex addr:port), st is f[3] (0A: LISTEN), inode is f[9].
      if (f[3] === "0A" && inodes.has(f[9] ?? "")) {
        ports.push(Number.parseInt(f[1]?.split(":")[1] ?? "", 16));
      }
    }
  }
  return ports;
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port`. */
async function tcpOpen(port: number): Promise<boolean> {
  return await new Promise((resolveOpen) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolveOpen(true);
    });
    socket.once("error", () => resolveOpen(false));
  });
}

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>("select 1 as one")).rows[0]?.one ?? 0;
  } finally {
    await client.end();
  }
}

describe("the embedded PostgreSQL's socket", { timeout: 180_000 }, () => {
  let base = "";
  let db: EmbeddedDatabase | undefined;
  let squatter: Server | undefined;
  let earlier: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), "pg-socket-"));
    // As root the server runs as `postgres`, which must reach the data dir.
    await chmod(base, 0o755);
  });
  afterAll(async () => {
    await db?.stop();
    await earlier?.stop().catch(() => {});
    await new Promise((done) =>
      squatter ? squatter.close(() => done(undefined)) : done(undefined),
    );
    await rm(base, { recursive: true, force: true });
  });

  it("gives a squatter on its port no connection: the server opens no TCP port, and Control logs in over a socket in a 0700 directory of the data dir", async () => {
    const dataDir = join(base, "squatted");
    const port = await freePort();
    const connections: string[] = [];
    squatter = createServer((socket) => {
      connections.push(String(socket.remotePort));
      // A fake server would now ask for the password in clear text; any byte is enough.
      socket.destroy();
    });
    await new Promise<void>((listening) => squatter?.listen(port, "127.0.0.1", listening));

    db = await startEmbeddedPostgres({ dataDir, database: "agent_control", port });
    expect(await selectOne(db.url)).toBe(1);
    expect(connections).toEqual([]);

    const url = new URL(db.url);
    const socketDir = join(dataDir, "run");
    expect(decodeURIComponent(url.hostname)).toBe(socketDir);
    expect(existsSync(join(socketDir, `.s.PGSQL.${port}`))).toBe(true);
    const dir = await stat(socketDir);
    expect(dir.isDirectory()).toBe(true);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(dir.uid).toBe(root ? (await stat(join(dataDir, "postgres"))).uid : process.getuid?.());

    await new Promise((done) => squatter?.close(() => done(undefined)));
    squatter = undefined;
    expect(await tcpOpen(port)).toBe(false);
    if (existsSync("/proc/net/tcp")) {
      expect(await tcpListenPorts(await serverPid(dataDir))).toEqual([]);
    }
    await db.stop();
    db = undefined;
  });

  it("restarts a server an earlier version left running on TCP, so that none listens on TCP", async () => {
    const dataDir = join(base, "earlier");
    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    await db.stop();
    db = undefined;
    // An earlier version's server, left running by a killed Control: TCP on 127.0.0.1.
    const port = await freePort();
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    const password = (await readFile(join(dataDir, "postgres-password"), "utf8")).trim();
    const left = new EmbeddedPostgres({
      databaseDir: join(dataDir, "postgres"),
      user: "postgres",
      password,
      port,
      persistent: true,
      createPostgresUser: root,
      onLog: () => {},
      onError: () => {},
    });
    earlier = left;
    await left.start();
    expect(await tcpOpen(port)).toBe(true);

    db = await startEmbeddedPostgres({ dataDir, database: "agent_control" });
    // Stopped by that start (the package's stop() would wait for an exit that came before).
    earlier = undefined;
    expect(await selectOne(db.url)).toBe(1);
    expect(await tcpOpen(port)).toBe(false);
    if (existsSync("/proc/net/tcp")) {
      expect(await tcpListenPorts(await serverPid(dataDir))).toEqual([]);
    }
    await db.stop();
    db = undefined;
  });

  it("refuses, in one line naming the limit, a data dir whose socket path is longer than a Unix socket allows", async () => {
    const dataDir = join(base, "d".repeat(100));
    const error = await startEmbeddedPostgres({ dataDir }).catch((e: unknown) => e);
    if (!(error instanceof Error)) await (error as EmbeddedDatabase).stop();
    expect(error).toBeInstanceOf(Error);
    const problems = (error as { problems?: string[] }).problems ?? [];
    expect(problems).toHaveLength(1);
    const message = problems[0] ?? "";
    expect(message).not.toContain("\n");
    expect(message).toMatch(/107 bytes/);
    expect(message).toContain("DATABASE_URL");
    expect(existsSync(join(dataDir, "postgres", "PG_VERSION"))).toBe(false);
  });
});
