/**
 * Hostile request bodies on the admin port. The token is checked on the headers, before a
 * byte of the body is read; each RPC has a body limit that fits it; all bodies together
 * have a budget. The memory test runs Control as a child process, as `npm start` does, and
 * reads its resident memory from `/metrics`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { type AddressInfo, createServer, connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlProcess, startControlProcess } from "../../agent-sim/demo/control-process.js";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";
import { RST_NO_ERROR, streamGrpc, streamPost } from "./hostile-http.js";

const MiB = 1024 * 1024;
const LIST_NODES = "/agentcontrol.admin.v1.NodeService/ListNodes";
const REGISTER_RELEASE = "/agentcontrol.admin.v1.ReleaseService/RegisterRelease";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Memory {
  readonly rss: number;
  readonly heap: number;
}

async function memory(adminUrl: string): Promise<Memory> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const read = (name: string) =>
    Number(
      text
        .split("\n")
        .find((l) => l.startsWith(`${name} `))
        ?.split(" ")[1],
    );
  return { rss: read("process_resident_memory_bytes"), heap: read("nodejs_heap_size_used_bytes") };
}

/** The least of a few readings: RSS and heap move a little on their own. */
async function settledMemory(adminUrl: string): Promise<Memory> {
  let least = { rss: Number.POSITIVE_INFINITY, heap: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 5; i += 1) {
    const now = await memory(adminUrl);
    least = { rss: Math.min(least.rss, now.rss), heap: Math.min(least.heap, now.heap) };
    await new Promise((r) => setTimeout(r, 200));
  }
  return least;
}

describe("unauthenticated 200 MB bodies against a Control process", { timeout: 120_000 }, () => {
  const TOKEN = "operator-token-for-the-bodies-test";
  let database: TestDatabase;
  let dataDir: string;
  let control: ControlProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase("bodies");
    dataDir = await mkdtemp(join(tmpdir(), "agent-control-bodies-"));
    control = await startControlProcess({
      dataDir,
      agentAddr: `127.0.0.1:${await freePort()}`,
      adminAddr: `127.0.0.1:${await freePort()}`,
      env: { DATABASE_URL: database.url, AGENT_CONTROL_ADMIN_TOKEN: TOKEN },
    });
  });
  afterAll(async () => {
    await control?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers each of 8 parallel POSTs 401 before reading its body, and Control's memory stays put", async () => {
    const url = (control as ControlProcess).adminUrl;
    // Warm the admin path once, so the first-use allocations are not counted as the attack's.
    await streamPost({ url, path: LIST_NODES, bytes: 2, stopOnAnswer: true });
    const before = await settledMemory(url);
    const BYTES = 200 * MiB;
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        streamPost({
          url,
          path: LIST_NODES,
          bytes: BYTES,
          // Half declare their length, half send chunked; a wrong token for some.
          declare: i % 2 === 0,
          headers: i % 4 === 1 ? { authorization: "Bearer not-a-token-of-this-control" } : {},
        }),
      ),
    );
    const after = await settledMemory(url);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe(401);
      expect(JSON.parse(outcome.body)).toMatchObject({ code: "unauthenticated" });
      // The answer came while the client was still sending, and the server stopped taking
      // bytes: the connection was closed instead of drained.
      expect(outcome.sentAtAnswer).toBeLessThan(BYTES);
      expect(outcome.sent).toBeLessThan(BYTES);
      expect(outcome.headers.connection).toBe("close");
    }
    const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
    console.log(
      `RSS ${mib(before.rss)} → ${mib(after.rss)}, heap ${mib(before.heap)} → ${mib(after.heap)}; ` +
        `each client wrote at most ${mib(Math.max(...outcomes.map((o) => o.sent)))} of 200 MiB (socket buffers)`,
    );
    // Before the fix RSS grew by 2 GB and stayed there.
    expect(after.rss - before.rss).toBeLessThan(16 * MiB);
    expect(after.heap - before.heap).toBeLessThan(8 * MiB);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const refused = metrics.match(
      /^agent_control_admin_requests_refused_total\{reason="unauthenticated"\} (\d+)$/m,
    );
    expect(Number(refused?.[1])).toBeGreaterThanOrEqual(8);
  });

  it("stops reading from a client that ignores the answer and the FIN and sends on", async () => {
    const url = new URL((control as ControlProcess).adminUrl);
    const socket = netConnect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
    await new Promise((resolve) => socket.once("connect", resolve));
    let sent = 0;
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
    });
    socket.on("error", () => {
      // Reset once the linger is over.
    });
    socket.write(
      `POST ${LIST_NODES} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
        `content-length: ${200 * MiB}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      const pump = () => {
        while (!socket.destroyed && sent < 200 * MiB) {
          sent += chunk.length;
          if (!socket.write(chunk)) {
            socket.once("drain", pump);
            return;
          }
        }
      };
      pump();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    // What fits in the two sockets' kernel buffers, not what a reader discarding the body
    // for the whole linger would have taken (tens of MB on loopback).
    expect(sent).toBeLessThan(24 * MiB);
  });

  it("answers a 200 MB unauthenticated gRPC call UNAUTHENTICATED and resets the stream unread", async () => {
    const url = (control as ControlProcess).adminUrl;
    const BYTES = 200 * MiB;
    const outcome = await streamGrpc({ url, path: LIST_NODES, bytes: BYTES });
    expect(outcome.grpcStatus).toBe("16");
    expect(outcome.sent).toBeLessThan(BYTES);
    expect(outcome.rstCode).toBe(RST_NO_ERROR);
  });
});

describe("admin request bodies: limits per RPC and in all", () => {
  let tc: TestControl;
  let keys: ReleaseKeyPair[];
  beforeAll(async () => {
    keys = await makeKeys(1);
    tc = await startTestControl({
      config: {
        release: { pins: keys.map((k) => k.pin), threshold: 1 },
        limits: {
          adminRequestBytes: 64 * 1024,
          adminReleaseBytes: 8 * MiB,
          adminBytesInFlight: 12 * MiB,
        },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });
  const operator = () => ({ authorization: `Bearer ${tc.operatorToken}` });

  it("answers an unauthenticated gRPC-Web call in gRPC-Web, before reading its body", async () => {
    const outcome = await streamPost({
      url: tc.adminUrl,
      path: LIST_NODES,
      headers: { "content-type": "application/grpc-web+proto" },
      bytes: 20 * MiB,
    });
    expect(outcome.status).toBe(200);
    // gRPC-Web carries the status in a trailer frame at the end of the body.
    expect(outcome.body).toMatch(/grpc-status: ?16\r\n/);
    expect(outcome.sent).toBeLessThan(20 * MiB);
  });

  it("answers a declared oversize body 413 resource_exhausted before reading it", async () => {
    const outcome = await streamPost({
      url: tc.adminUrl,
      path: LIST_NODES,
      headers: operator(),
      bytes: 20 * MiB,
    });
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toMatchObject({ code: "resource_exhausted" });
    expect(outcome.sentAtAnswer).toBeLessThan(20 * MiB);
    expect(outcome.sent).toBeLessThan(20 * MiB);
  });

  it("answers a chunked body 413 once it passes the RPC's limit, without reading on", async () => {
    const outcome = await streamPost({
      url: tc.adminUrl,
      path: LIST_NODES,
      headers: operator(),
      bytes: 20 * MiB,
      declare: false,
    });
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toMatchObject({ code: "resource_exhausted" });
    expect(outcome.sent).toBeLessThan(20 * MiB);
  });

  it("refuses a viewer's large RegisterRelease PERMISSION_DENIED on its headers", async () => {
    const outcome = await streamPost({
      url: tc.adminUrl,
      path: REGISTER_RELEASE,
      headers: { authorization: `Bearer ${tc.viewerToken}` },
      bytes: 6 * MiB,
    });
    expect(outcome.status).toBe(403);
    expect(JSON.parse(outcome.body)).toMatchObject({ code: "permission_denied" });
    expect(outcome.sent).toBeLessThan(6 * MiB);
  });

  it("ends an oversize gRPC call RESOURCE_EXHAUSTED and resets the stream", async () => {
    const outcome = await streamGrpc({
      url: tc.adminUrl,
      path: LIST_NODES,
      headers: operator(),
      bytes: 20 * MiB,
    });
    expect(outcome.grpcStatus).toBe("8");
    expect(outcome.sent).toBeLessThan(20 * MiB);
  });

  it("refuses a body that does not fit the bytes in flight, and takes it once they are free", async () => {
    // A first upload of 7 MiB is under way (its body half sent, held open).
    const url = new URL(tc.adminUrl);
    const { request } = await import("node:http");
    const first = request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: REGISTER_RELEASE,
      agent: false,
      headers: {
        ...operator(),
        "content-type": "application/proto",
        "content-length": String(7 * MiB),
      },
    });
    first.on("error", () => {
      // Aborted below.
    });
    first.write(Buffer.alloc(MiB));
    await new Promise((r) => setTimeout(r, 200));
    const second = await streamPost({
      url: tc.adminUrl,
      path: REGISTER_RELEASE,
      headers: { ...operator(), "content-type": "application/proto" },
      bytes: 7 * MiB,
    });
    expect(second.status).toBe(429);
    expect(JSON.parse(second.body)).toMatchObject({ code: "resource_exhausted" });
    first.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const release = await makeRelease({
      version: "2.0.0",
      sequence: 20,
      keys,
      platforms: ["linux-amd64"],
      content: () => new Uint8Array(6 * MiB).fill(7),
    });
    const registered = await tc.client(ReleaseService).registerRelease({
      envelope: release.envelope,
      artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
    });
    expect(registered.created).toBe(true);
  });

  it("still answers normal calls, and RegisterRelease with a multi-MB artifact for an operator", async () => {
    expect((await tc.client(NodeService, tc.viewerToken).listNodes({})).totalSize).toBe(0);
    const release = await makeRelease({
      version: "2.1.0",
      sequence: 21,
      keys,
      platforms: ["linux-amd64", "linux-arm64"],
      content: (platform) => new Uint8Array(3 * MiB).fill(platform.length),
    });
    const registered = await tc.client(ReleaseService).registerRelease({
      envelope: release.envelope,
      artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
    });
    expect(registered.created).toBe(true);
    expect(registered.release?.version).toBe("2.1.0");
  });
});
