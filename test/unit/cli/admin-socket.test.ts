/**
 * Where agentctl sends the local token file (security review finding 6): only over the admin
 * Unix socket of the data directory it came from, checked to belong to the token file's owner;
 * never to a TCP port. Explicit tokens keep going where `--server` says.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createNetServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAdminSocket } from "../../../cli/admin-socket.js";
import { UsageError } from "../../../cli/args.js";
import { createAdminClients, resolveConnection } from "../../../cli/client.js";
import { describeError } from "../../../cli/errors.js";

const uid = process.getuid?.() ?? 0;

function listen(server: Server, path: string): Promise<void> {
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(path, () => done());
  });
}

describe("resolveConnection: the local token file goes only over the admin socket", () => {
  const readToken = (path: string): string | undefined =>
    path === "/srv/data/admin-token" ? "file-token" : undefined;

  it("sends the data dir's token file over <dataDir>/control-run/admin.sock, not to the TCP server", () => {
    expect(resolveConnection({ env: {}, dataDir: "/srv/data", readToken })).toMatchObject({
      server: "http://127.0.0.1:7080",
      tokenSource: "file",
      token: "file-token",
      socketPath: "/srv/data/control-run/admin.sock",
    });
  });

  it("uses the socket that the data dir's admin-endpoint.json names", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agentctl-note-"));
    try {
      await writeFile(
        join(dir, "admin-endpoint.json"),
        JSON.stringify({ url: "http://127.0.0.1:7080", pid: 1, socket: "/run/ac/admin.sock" }),
      );
      await writeFile(join(dir, "admin-token"), "noted-file-token\n");
      expect(resolveConnection({ env: {}, dataDir: dir }).socketPath).toBe("/run/ac/admin.sock");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps --token and AGENTCTL_TOKEN on the TCP server, as before", () => {
    const flag = resolveConnection({ env: {}, dataDir: "/srv/data", readToken, token: "t-flag" });
    expect(flag.socketPath).toBeUndefined();
    expect(flag.server).toBe("http://127.0.0.1:7080");
    const env = { AGENTCTL_TOKEN: "t-env", AGENT_CONTROL_DATA_DIR: "/srv/data" };
    expect(resolveConnection({ env, readToken }).socketPath).toBeUndefined();
  });

  it("sends no token file, and uses no socket, when the data dir has none", () => {
    const c = resolveConnection({ env: {}, dataDir: "/elsewhere", readToken });
    expect(c).toMatchObject({ tokenSource: "none", server: "http://127.0.0.1:7080" });
    expect(c.socketPath).toBeUndefined();
  });

  it("accepts --server unix:PATH, its data dir the one the default socket lies in", () => {
    const c = resolveConnection({
      env: {},
      server: "unix:/srv/data/control-run/admin.sock",
      readToken,
    });
    expect(c).toMatchObject({
      server: "unix:/srv/data/control-run/admin.sock",
      socketPath: "/srv/data/control-run/admin.sock",
      dataDir: "/srv/data",
      tokenSource: "file",
    });
    expect(resolveConnection({ env: { AGENTCTL_SERVER: "unix:rel.sock" } }).socketPath).toBe(
      resolve("rel.sock"),
    );
    const explicit = resolveConnection({ env: {}, server: "unix:/x/a.sock", token: "t-flag" });
    expect(explicit).toMatchObject({ socketPath: "/x/a.sock", tokenSource: "flag" });
  });

  it("refuses unix: without a path", () => {
    expect(() => resolveConnection({ env: {}, server: "unix:" })).toThrow(UsageError);
  });
});

describe("checkAdminSocket: a socket the token file's owner made, in a directory only they write", () => {
  let dir = "";
  const servers: Server[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-sock-"));
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const socketIn = async (name: string, mode: number) => {
    const at = join(dir, name);
    await mkdir(at, { mode });
    await chmod(at, mode);
    const server = createNetServer();
    servers.push(server);
    await listen(server, join(at, "admin.sock"));
    return join(at, "admin.sock");
  };

  it("accepts a socket in a 0700 directory of the owner", async () => {
    expect(checkAdminSocket(await socketIn("private", 0o700), uid)).toEqual({ kind: "ok" });
  });

  it("says absent when nothing is there", () => {
    expect(checkAdminSocket(join(dir, "none", "admin.sock"), uid)).toEqual({ kind: "absent" });
  });

  it("refuses a socket in a directory others may write (another user could have put it there)", async () => {
    const path = await socketIn("shared", 0o777);
    expect(checkAdminSocket(path, uid)).toMatchObject({ kind: "untrusted" });
  });

  it("refuses a socket of another user, and a file that is no socket", async () => {
    const path = await socketIn("other", 0o700);
    expect(checkAdminSocket(path, uid + 1)).toMatchObject({ kind: "untrusted" });
    await writeFile(join(dir, "other", "plain"), "");
    expect(checkAdminSocket(join(dir, "other", "plain"), uid)).toMatchObject({
      kind: "untrusted",
    });
  });
});

describe("agentctl over the admin socket", () => {
  let dir = "";
  let tcp: Server;
  let tcpBytes = "";
  let tcpPort = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-over-"));
    tcp = createNetServer((socket) => {
      socket.on("data", (chunk) => {
        tcpBytes += chunk.toString("latin1");
      });
      socket.destroy();
    });
    await new Promise<void>((done) => tcp.listen(0, "127.0.0.1", () => done()));
    tcpPort = (tcp.address() as { port: number }).port;
  });
  afterAll(async () => {
    tcp.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("sends the token file's token on the socket and nothing to the TCP port", async () => {
    const dataDir = join(dir, "data");
    await mkdir(join(dataDir, "control-run"), { recursive: true, mode: 0o700 });
    await writeFile(join(dataDir, "admin-token"), "socket-file-token-0123\n", { mode: 0o600 });
    const seen: IncomingHttpHeaders[] = [];
    const http = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(404);
      res.end();
    });
    await listen(http, join(dataDir, "control-run", "admin.sock"));
    try {
      const connection = resolveConnection({
        env: {},
        dataDir,
        server: `http://127.0.0.1:${tcpPort}`,
      });
      const clients = createAdminClients(connection, { method: undefined });
      await expect(clients.version.getVersion({})).rejects.toThrow();
      expect(seen.map((h) => h.authorization)).toEqual(["Bearer socket-file-token-0123"]);
      expect(tcpBytes).toBe("");
      expect(clients.server).toBe(`unix:${join(dataDir, "control-run", "admin.sock")}`);
    } finally {
      http.close();
    }
  });

  it("says in one line that no Control runs there when the socket is absent, sending nothing", async () => {
    const dataDir = join(dir, "down");
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, "admin-token"), "down-file-token-0123\n", { mode: 0o600 });
    const connection = resolveConnection({
      env: {},
      dataDir,
      server: `http://127.0.0.1:${tcpPort}`,
    });
    const clients = createAdminClients(connection, { method: undefined });
    const error = await clients.nodes.listNodes({}).catch((e: unknown) => e);
    expect(describeError(error, { connection })).toBe(
      `no Control is running with the data directory ${dataDir}: nothing answers on its admin socket ${join(dataDir, "control-run", "admin.sock")} (the token in ${join(dataDir, "admin-token")} is sent there only); for a Control elsewhere or over TCP, pass its token with --token or AGENTCTL_TOKEN`,
    );
    expect(tcpBytes).toBe("");
  });

  it("maps a refused connection on the socket to the same line", () => {
    const connection = resolveConnection({
      env: {},
      dataDir: "/srv/data",
      readToken: () => "file-token",
    });
    const cause = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const refused = new ConnectError("connect ECONNREFUSED", Code.Unavailable, {}, [], cause);
    expect(describeError(refused, { connection })).toMatch(
      /^no Control is running with the data directory \/srv\/data: nothing answers on its admin socket \/srv\/data\/control-run\/admin.sock /,
    );
  });
});
