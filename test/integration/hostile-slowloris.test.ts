/**
 * Slow and idle clients on the admin port: headers sent byte by byte, connections that send
 * nothing, more connections than the cap, idle HTTP/2 sessions. Timeouts are small here
 * (config); the tests bound how long closing takes only generously.
 */
import { connect as http2Connect } from "node:http2";
import type { Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { tlsConfig, tlsFile } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { closed, rawSocket } from "./hostile-http.js";

const CAP = 12;
const LIST_NODES = "/agentcontrol.admin.v1.NodeService/ListNodes";

/** Writes `text` to `socket` one byte every `everyMs`, until the socket closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= text.length) {
      clearInterval(timer);
      return;
    }
    socket.write(text[at] ?? "");
    at += 1;
  }, everyMs);
  socket.once("close", () => clearInterval(timer));
}

/** Resolves with how long `done` took, or rejects after `limitMs`. */
async function within<T>(limitMs: number, done: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function metric(tc: TestControl, name: string): Promise<number> {
  const text = await (await fetch(`${tc.adminUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

/** A keep-alive HTTP/1.1 connection that asks for /healthz on demand. */
async function healthConnection(url: string) {
  const socket = await rawSocket(url);
  const ended = closed(socket);
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("latin1");
  });
  return {
    socket,
    ended,
    async ask(): Promise<boolean> {
      received = "";
      socket.write("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
      const deadline = Date.now() + 5000;
      // The answer ends with the last chunk of "ok\n" (chunked) or "ok\n" itself.
      while (
        !received.endsWith("\r\n\r\n") &&
        !received.endsWith("ok\n") &&
        !socket.destroyed &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 10));
      }
      return received.startsWith("HTTP/1.1 200");
    },
  };
}

describe("slow and idle admin clients", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: {
        limits: { adminMaxConnections: CAP },
        timeouts: {
          adminHeadersSeconds: 1,
          adminRequestSeconds: 2,
          adminKeepAliveSeconds: 20,
          adminIdleSeconds: 1,
        },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("closes connections that send their headers byte by byte, while normal calls go on", async () => {
    const slow = await Promise.all(Array.from({ length: 6 }, () => rawSocket(tc.adminUrl)));
    const ends = slow.map((socket) => closed(socket));
    for (const socket of slow) {
      trickle(
        socket,
        `POST ${LIST_NODES} HTTP/1.1\r\nhost: x\r\nx-padding: ${"a".repeat(10_000)}`,
        50,
      );
    }
    const viewer = tc.client(NodeService, tc.viewerToken);
    expect((await viewer.listNodes({})).totalSize).toBe(0);
    const answers = await within(10_000, Promise.all(ends));
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect((await viewer.listNodes({})).totalSize).toBe(0);
  });

  it("closes a connection that never sends a byte", async () => {
    const socket = await rawSocket(tc.adminUrl);
    expect(await within(10_000, closed(socket))).toBe("");
  });

  it("cuts off an authenticated body sent byte by byte at the request timeout", async () => {
    const socket = await rawSocket(tc.adminUrl);
    const end = closed(socket);
    socket.write(
      `POST ${LIST_NODES} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `authorization: Bearer ${tc.viewerToken}\r\ncontent-length: 1000\r\n\r\n`,
    );
    trickle(socket, "{".padEnd(1000, " "), 50);
    const answer = await within(10_000, end);
    expect(answer).not.toMatch(/^HTTP\/1\.1 200 /);
  });

  it("refuses connections beyond the cap while the open ones keep working", async () => {
    const refusedBefore = await metric(tc, "agent_control_admin_connections_refused_total");
    // Fill the cap (earlier calls of this file may still hold keep-alive connections).
    const open: Awaited<ReturnType<typeof healthConnection>>[] = [];
    let refused: Awaited<ReturnType<typeof healthConnection>> | undefined;
    while (!refused && open.length <= CAP) {
      const connection = await healthConnection(tc.adminUrl);
      if (await connection.ask()) open.push(connection);
      else refused = connection;
    }
    expect(open.length).toBeGreaterThan(0);
    expect(open.length).toBeLessThanOrEqual(CAP);
    // The one over the cap was accepted by the kernel and closed by Control, unanswered.
    expect(await within(5000, (refused as NonNullable<typeof refused>).ended)).toBe("");
    for (const connection of open) expect(await connection.ask()).toBe(true);
    // Closing some makes room again.
    for (const connection of open.slice(0, 2)) connection.socket.destroy();
    await Promise.all(open.slice(0, 2).map((c) => c.ended));
    let admitted = false;
    for (let attempt = 0; attempt < 50 && !admitted; attempt += 1) {
      const again = await healthConnection(tc.adminUrl);
      admitted = await again.ask();
      again.socket.destroy();
      if (!admitted) await new Promise((r) => setTimeout(r, 50));
    }
    expect(admitted).toBe(true);
    for (const connection of open) connection.socket.destroy();
    expect(
      await metric(tc, "agent_control_admin_connections_refused_total"),
    ).toBeGreaterThanOrEqual(refusedBefore + 1);
  });

  it("closes an HTTP/2 session that idles after its last stream, and one that opens none", async () => {
    const idle = http2Connect(tc.adminUrl);
    idle.on("error", () => {
      // A GOAWAY or a reset is how it ends.
    });
    const idleClosed = new Promise<void>((resolve) => idle.once("close", () => resolve()));
    const stream = idle.request({ ":path": "/healthz" });
    stream.resume();
    const status = await new Promise<number>((resolve) =>
      stream.once("response", (headers) => resolve(Number(headers[":status"]))),
    );
    expect(status).toBe(200);
    await new Promise((resolve) => stream.once("close", resolve));
    await within(10_000, idleClosed);

    const silent = http2Connect(tc.adminUrl);
    silent.on("error", () => {
      // Destroyed by Control.
    });
    await within(10_000, new Promise<void>((resolve) => silent.once("close", () => resolve())));
  });
});

describe("slow clients of the admin API over HTTPS", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: {
        tls: tlsConfig({ admin: true }),
        timeouts: { adminHeadersSeconds: 1, adminRequestSeconds: 2, adminIdleSeconds: 1 },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const secureSocket = async (alpn: string) => {
    const { hostname, port } = new URL(tc.adminUrl);
    const socket = tlsConnect({
      host: hostname,
      port: Number(port),
      ca: tlsFile("ca"),
      servername: "localhost",
      ALPNProtocols: [alpn],
    });
    await new Promise((resolve, reject) => {
      socket.once("secureConnect", resolve);
      socket.once("error", reject);
    });
    return socket;
  };

  it("closes HTTP/1.1 connections that send their headers byte by byte", async () => {
    const socket = await secureSocket("http/1.1");
    const end = closed(socket);
    trickle(
      socket,
      `POST ${LIST_NODES} HTTP/1.1\r\nhost: x\r\nx-padding: ${"a".repeat(10_000)}`,
      50,
    );
    expect((await tc.client(NodeService, tc.viewerToken).listNodes({})).totalSize).toBe(0);
    expect(await within(10_000, end)).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a connection that never finishes its TLS handshake", async () => {
    const socket = await rawSocket(tc.adminUrl);
    expect(await within(10_000, closed(socket))).toBe("");
  });

  it("answers an unauthenticated 20 MB body 401 before reading it", async () => {
    const socket = await secureSocket("http/1.1");
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
    });
    const end = closed(socket);
    socket.write(
      `POST ${LIST_NODES} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `content-length: ${20 * 1024 * 1024}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    let sent = 0;
    const pump = () => {
      while (!socket.destroyed && sent < 20 * 1024 * 1024) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once("drain", pump);
          return;
        }
      }
    };
    pump();
    await within(10_000, end);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(sent).toBeLessThan(20 * 1024 * 1024);
  });

  it("closes an HTTP/2 session that opens no stream", async () => {
    const session = http2Connect(tc.adminUrl, { ca: tlsFile("ca"), servername: "localhost" });
    session.on("error", () => {
      // Destroyed by Control.
    });
    await within(10_000, new Promise<void>((resolve) => session.once("close", () => resolve())));
  });
});
