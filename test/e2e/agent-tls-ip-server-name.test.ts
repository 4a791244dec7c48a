/**
 * The real Agent and the simulator given `--server` as an IP address over TLS: Node.js warns
 * "Setting the TLS ServerName to an IP address is not permitted by RFC 6066" (DEP0123) on
 * stderr when a client names an IP as the TLS server name, which grpc-js does with its
 * target's host, so the logs were no longer JSON lines only.
 *
 * Expected: no IP goes into the TLS server name, every line either process writes is JSON,
 * and Control's certificate is still verified against the IP address (a certificate that does
 * not name the IP dialled is refused: no handshake completes).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TlsFixture, tlsFile, tlsPath } from "../fixtures/tls/index.js";
import { makeKeys } from "../helpers/releases.js";

const ROOT = join(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");

/** A TLS listener on `host` with Control's test certificate, speaking h2; records what it saw. */
async function tlsListener(host: string) {
  const cert: TlsFixture = "server";
  const seen = { connections: 0, handshakes: [] as (string | false)[] };
  const server: Server = createServer(
    { cert: tlsFile(cert), key: tlsFile(cert, "key"), ALPNProtocols: ["h2"] },
    (socket: TLSSocket) => {
      seen.handshakes.push(socket.servername ?? false);
      socket.on("error", () => {});
    },
  );
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    seen.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = `${host}:${(server.address() as AddressInfo).port}`;
  return {
    seen,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Starts `args` under tsx from the repository root, keeping everything it writes. */
function run(args: readonly string[]) {
  const out = { stdout: "", stderr: "" };
  const child: ChildProcess = spawn(TSX, [...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "" },
    // Its own process group: stopping it stops tsx, the supervisor and the Agent it runs.
    detached: true,
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    out.stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    out.stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    out,
    async stop() {
      const group = (signal: NodeJS.Signals) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, signal);
        } catch {
          // already gone
        }
      };
      group("SIGTERM");
      const timer = setTimeout(() => group("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function until(what: string, ok: () => boolean, timeoutMs = 90_000): Promise<void> {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The lines of `text` that are not one JSON object each. */
function notJson(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .filter((line) => {
      try {
        return typeof JSON.parse(line) !== "object";
      } catch {
        return true;
      }
    });
}

describe("--server as an IP address over TLS", () => {
  let pin = "";
  let dir = "";
  beforeAll(async () => {
    const [key] = await makeKeys(1);
    pin = key?.pin ?? "";
    dir = await mkdtemp(join(tmpdir(), "agent-ip-sni-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const agentArgs = (server: string, install: string) => [
    "agent/main.ts",
    "run",
    "--install-dir",
    join(dir, install),
    "--server",
    server,
    "--ca",
    tlsPath("ca"),
    "--pins",
    pin,
    "--join-token",
    "ip-sni-join",
    "--node-id",
    "ip-sni-node",
  ];
  const simArgs = (server: string) => [
    "agent-sim/main.ts",
    "--count",
    "1",
    "--server",
    server,
    "--ca",
    tlsPath("ca"),
    "--join-token",
    "ip-sni-join",
  ];

  it.each([
    ["the real Agent", (server: string) => agentArgs(server, "install"), true],
    ["the simulator", simArgs, false],
  ])(
    "%s verifies Control's certificate against the IP and logs JSON lines only",
    async (_name, args, stdoutIsLog) => {
      const control = await tlsListener("127.0.0.1");
      const proc = run(args(control.address));
      try {
        await until("a TLS handshake", () => control.seen.handshakes.length > 0);
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        await proc.stop();
        await control.close();
      }
      expect(proc.out.stderr).not.toMatch(/ServerName|DEP0123|DeprecationWarning/);
      expect(notJson(proc.out.stderr)).toEqual([]);
      // The simulator's stdout is its progress display, not a log.
      if (stdoutIsLog) expect(notJson(proc.out.stdout)).toEqual([]);
      // No IP address is sent as the server name (RFC 6066).
      for (const name of control.seen.handshakes) expect(name).not.toMatch(/^[\d.]+$|:/);
    },
    120_000,
  );

  it("the real Agent still refuses a certificate that does not name the IP it dials", async () => {
    // Control's certificate names 127.0.0.1 and localhost; the Agent dials 127.0.0.2.
    const control = await tlsListener("127.0.0.2");
    const proc = run(agentArgs(control.address, "install-other-ip"));
    try {
      await until("two connection attempts", () => control.seen.connections >= 2);
    } finally {
      await proc.stop();
      await control.close();
    }
    expect(control.seen.handshakes).toEqual([]);
    expect(proc.out.stderr).toMatch(/IP: 127\.0\.0\.2 is not in the cert's list/);
    expect(proc.out.stderr).not.toMatch(/ServerName|DEP0123|DeprecationWarning/);
    expect(notJson(proc.out.stderr)).toEqual([]);
  }, 120_000);
});
