/**
 * Download slots go to the fleet, not to whoever opens connections: with real sockets on
 * loopback,
 * - 64 unauthenticated GETs that read nothing hold no slot on a listener off loopback (a
 *   credential is required there by default): each is answered 401, and an Agent downloads;
 * - a request is authenticated before it takes a slot, so with every slot held an
 *   unauthenticated request is still answered 401, not 503;
 * - one node holds at most `downloads.maxPerClient` slots;
 * - clients that take no bytes are cut once their slots are wanted, well within the Agent's
 *   503 retries, so the Agent's download completes instead of failing `download_failed`.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_DOWNLOAD_POLICY, fetchArtifact } from "../../agent/core/download.js";
import { downloadPath } from "../../control/releases/downloads.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { storeLargeArtifact } from "../helpers/large-artifact.js";
import { connectAgent } from "../helpers/raw-agent.js";

const MIB = 1024 * 1024;
/** No pair of loopback socket buffers holds it whole: a reader that stops holds its slot. */
const HELD = 32 * MIB;
const SMALL = 256 * 1024;

/** Enrolls `nodeId` and returns its node token. */
async function nodeToken(tc: TestControl, nodeId: string): Promise<string> {
  const { stream, welcome } = await connectAgent(tc.agentAddress, await tc.joinToken(), nodeId);
  stream.close();
  await stream.ended;
  if (welcome.body.case !== "welcome") throw new Error(`${nodeId} was not welcomed`);
  return welcome.body.value.nodeToken;
}

/** A GET whose reader takes the status line and then nothing; resolves with that line. */
function idleGet(url: string, token?: string): Promise<{ socket: Socket; status: number }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const auth = token === undefined ? "" : `authorization: Bearer ${token}\r\n`;
      socket.write(`GET ${pathname} HTTP/1.1\r\nhost: ${hostname}\r\n${auth}\r\n`);
    });
    socket.once("error", reject);
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      const line = chunk.toString("latin1").split("\r\n")[0] ?? "";
      resolve({ socket, status: Number(line.split(" ")[1]) });
    });
  });
}

/** Reads a paused socket on until it closes; the bytes it received. */
function readToClose(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
    });
    socket.once("close", () => resolve(bytes));
    socket.resume();
  });
}

/** Control's `agent_control_downloads_total{status}`. */
async function answered(tc: TestControl, status: string): Promise<number> {
  const text = await (await fetch(`${tc.adminUrl}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`agent_control_downloads_total{status="${status}"}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

async function activeDownloads(tc: TestControl): Promise<number> {
  const text = await (await fetch(`${tc.adminUrl}/metrics`)).text();
  return Number(/^agent_control_downloads_in_flight (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

describe("download slots on a listener off loopback, by default", { timeout: 120_000 }, () => {
  let tc: TestControl;
  let url = "";
  let heldUrl = "";
  let sha256 = "";
  beforeAll(async () => {
    tc = await startTestControl({
      // Every interface, in clear text (allowInsecure): requireAuth is left at its default.
      config: { downloads: { addr: "0.0.0.0:0" }, allowInsecure: true },
    });
    sha256 = await storeLargeArtifact(tc, "8.0.0", SMALL, 80);
    await storeLargeArtifact(tc, "8.0.1", HELD, 801);
    url = `${tc.control.downloadsUrl}${downloadPath("8.0.0", "linux-amd64")}`;
    heldUrl = `${tc.control.downloadsUrl}${downloadPath("8.0.1", "linux-amd64")}`;
  }, 120_000);
  afterAll(async () => {
    await tc?.stop();
  });

  it("answers 64 idle unauthenticated GETs 401 without a slot, and an Agent downloads meanwhile", async () => {
    // GETs of an artifact larger than the sockets' buffers: served, each would hold a slot.
    const idle = await Promise.all(Array.from({ length: 64 }, () => idleGet(heldUrl)));
    try {
      expect(idle.map((g) => g.status)).toEqual(Array(64).fill(401));
      expect(await activeDownloads(tc)).toBe(0);
      const token = await nodeToken(tc, "slots-agent-1");
      const started = Date.now();
      const result = await fetchArtifact(
        url,
        SMALL,
        DEFAULT_DOWNLOAD_POLICY,
        new AbortController().signal,
        `Bearer ${token}`,
      );
      expect(result.ok ? result.artifact.sha256 : result.message).toBe(sha256);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const g of idle) g.socket.destroy();
    }
  });
});

describe("download slots held by clients that read nothing", { timeout: 180_000 }, () => {
  let tc: TestControl;
  let heldUrl = "";
  let heldSha = "";
  beforeAll(async () => {
    tc = await startTestControl({
      config: {
        downloads: { addr: "127.0.0.1:0", requireAuth: true, maxConcurrent: 2, maxPerClient: 2 },
        limits: { maxConcurrentHandshakes: 1024, handshakesPerCredential: 1024 },
      },
    });
    heldSha = await storeLargeArtifact(tc, "8.1.0", HELD, 81);
    heldUrl = `${tc.control.downloadsUrl}${downloadPath("8.1.0", "linux-amd64")}`;
  }, 120_000);
  afterAll(async () => {
    await tc?.stop();
  });

  it("serves one node at most maxPerClient downloads at once: 503 with Retry-After beyond", async () => {
    const token = await nodeToken(tc, "slots-greedy");
    const held = [await idleGet(heldUrl, token), await idleGet(heldUrl, token)];
    try {
      expect(held.map((g) => g.status)).toEqual([200, 200]);
      // maxConcurrent is 2 as well: the per-client limit must answer before the global one.
      const third = await fetch(heldUrl, {
        headers: { authorization: `Bearer ${token}`, range: "bytes=0-15" },
      });
      expect(third.status).toBe(503);
      expect(third.headers.get("retry-after")).toBe("2");
      expect(await third.text()).toMatch(/this client/);
    } finally {
      for (const g of held) g.socket.destroy();
    }
  });

  it("authenticates before the slot: 401, not 503, with every slot held; then cuts the idle holders for an Agent", async () => {
    const holders = [
      await idleGet(heldUrl, await nodeToken(tc, "slots-idle-1")),
      await idleGet(heldUrl, await nodeToken(tc, "slots-idle-2")),
    ];
    try {
      expect(holders.map((g) => g.status)).toEqual([200, 200]);
      const anonymous = await fetch(heldUrl);
      expect(anonymous.status).toBe(401);
      await anonymous.text();

      // The Agent's own download: 503s waited out (2 s each, 10 at most) until a slot frees.
      const token = await nodeToken(tc, "slots-agent-2");
      const refusedBefore = await answered(tc, "503");
      const started = Date.now();
      const result = await fetchArtifact(
        heldUrl,
        HELD,
        DEFAULT_DOWNLOAD_POLICY,
        new AbortController().signal,
        `Bearer ${token}`,
      );
      expect(result.ok ? result.artifact.sha256 : result.message).toBe(heldSha);
      // Well within the Agent's 503 retries (10, 2 s apart): a holder is cut once it has
      // taken nothing for 5 s.
      expect((await answered(tc, "503")) - refusedBefore).toBeLessThanOrEqual(5);
      console.info(
        `downloads: an Agent downloaded past idle holders in ${Date.now() - started} ms`,
      );
      // A holder was cut for it: read on, its body ends short (the other is served whole).
      const received = await Promise.all(holders.map((h) => readToClose(h.socket)));
      expect(Math.min(...received)).toBeLessThan(HELD);
    } finally {
      for (const g of holders) g.socket.destroy();
    }
  });
});
