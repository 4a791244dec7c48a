/**
 * The downloads listener (`downloads.addr`): agents upgrade downloading from it alone, with
 * their node token when `downloads.requireAuth` is set; single ranges; TLS with client
 * certificates. The load half (concurrency limit, memory per reader) is in
 * hostile-downloads.test.ts.
 */
import { randomBytes } from "node:crypto";
import { request as httpsRequest } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import { downloadPath } from "../../control/releases/downloads.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { channelCredentials, NODE_A, tlsFile, tlsPath } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { hello, openRawStream } from "../helpers/raw-agent.js";
import { makeKeys, makeRelease, registerTestRelease } from "../helpers/releases.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  OLD,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

/** Spans several 512 KiB chunks and ends inside one. */
const ARTIFACT = randomBytes(3 * 512 * 1024 + 12_345);

describe("a downloads listener of its own, requiring node tokens", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let fleet: Fleet;
  let downloadsUrl: string;
  let url: string;
  beforeAll(async () => {
    fx = await campaignFixture({ downloads: { addr: "127.0.0.1:0", requireAuth: true } });
    downloadsUrl = fx.tc.control.downloadsUrl ?? "";
    url = `${downloadsUrl}${downloadPath(NEW, "linux-amd64")}`;
    const release = await makeRelease({
      version: NEW,
      sequence: 20,
      keys: [fx.key],
      platforms: ["linux-amd64"],
      content: () => ARTIFACT,
    });
    await fx.tc.client(ReleaseService).registerRelease({
      envelope: release.envelope,
      artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
    });
    fleet = await fx.fleet({ count: 20 });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  const nodeToken = () => fleet.agents[0]?.state.nodeToken ?? "";
  const get = (headers: Record<string, string> = {}, method = "GET") =>
    fetch(url, { method, headers: { authorization: `Bearer ${nodeToken()}`, ...headers } });

  it("is the agents' download URL by default, and the admin port serves no downloads", async () => {
    expect(downloadsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(downloadsUrl).not.toBe(fx.tc.adminUrl);
    const { release } = await fx.tc.client(ReleaseService).getRelease({ version: NEW });
    expect(release?.artifacts[0]?.url).toBe(url);
    const admin = await fetch(`${fx.tc.adminUrl}${downloadPath(NEW, "linux-amd64")}`, {
      headers: { authorization: `Bearer ${nodeToken()}` },
    });
    expect(admin.status).toBe(404);
    expect((await fetch(`${downloadsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${downloadsUrl}/metrics`)).status).toBe(404);
  });

  it("upgrades a fleet whose agents download from it with their node tokens", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec(NEW, [5, 100]) });
    const done = await waitForCampaign(fx.campaigns, started.campaign?.id ?? "");
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.counts).toEqual([
      expect.objectContaining({ state: NodeState.SUCCEEDED, count: 20 }),
    ]);
    await fleet.waitUntil((f) => f.stats().versions[NEW] === 20, 10_000, "all on the target");
    expect(fleet.stats().versions[OLD]).toBeUndefined();
    // The artifact really crossed the downloads listener, with a credential.
    const metrics = await (await fetch(`${fx.tc.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/agent_control_downloads_total\{status="200"\} [1-9]/);
    expect(metrics).not.toMatch(/agent_control_downloads_total\{status="401"\}/);
  });

  it("refuses a request without a valid node token with 401, and serves it byte-exact with one", async () => {
    const refused = [
      await fetch(url),
      await fetch(url, { headers: { authorization: "Bearer not-a-credential" } }),
      await fetch(url, { headers: { authorization: `Bearer ${nodeToken()}x` } }),
      await fetch(url, { headers: { authorization: `Bearer ${await fx.tc.joinToken()}` } }),
      await fetch(url, { method: "HEAD" }),
    ];
    for (const [i, response] of refused.entries()) {
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const body = await response.text();
      expect(body).not.toContain(nodeToken());
      if (i === refused.length - 1) continue; // HEAD: no body
      // It says what a download accepts: a node token, never a join token.
      expect(body).toMatch(/a node token/);
      expect(body).not.toMatch(/join token or node token/);
    }
    const ok = await get();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("accept-ranges")).toBe("bytes");
    expect(Buffer.from(await ok.arrayBuffer()).equals(ARTIFACT)).toBe(true);
  });

  it("answers single ranges with exact slices, 416 beyond the end, and HEAD without a body", async () => {
    const size = ARTIFACT.length;
    const cases: Array<[string, number, number]> = [
      ["bytes=0-0", 0, 0],
      ["bytes=524280-524300", 524280, 524300], // across a chunk boundary
      ["bytes=1000000-", 1_000_000, size - 1],
      ["bytes=-777", size - 777, size - 1],
      [`bytes=10-${size + 5000}`, 10, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const response = await get({ range });
      expect(response.status, range).toBe(206);
      expect(response.headers.get("content-range"), range).toBe(`bytes ${start}-${end}/${size}`);
      expect(Number(response.headers.get("content-length")), range).toBe(end - start + 1);
      const body = Buffer.from(await response.arrayBuffer());
      expect(body.equals(ARTIFACT.subarray(start, end + 1)), range).toBe(true);
    }
    const beyond = await get({ range: `bytes=${size}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe(`bytes */${size}`);
    await beyond.arrayBuffer();

    const stale = await get({ range: "bytes=0-9", "if-range": '"another-etag"' });
    expect(stale.status).toBe(200);
    expect((await stale.arrayBuffer()).byteLength).toBe(size);
    const multi = await get({ range: "bytes=0-1,5-6" });
    expect(multi.status).toBe(200);
    await multi.arrayBuffer();

    const head = await get({}, "HEAD");
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBe(size);
    expect(head.headers.get("etag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const headRange = await get({ range: "bytes=5-9" }, "HEAD");
    expect(headRange.status).toBe(206);
    expect(headRange.headers.get("content-range")).toBe(`bytes 5-9/${size}`);
  });

  it("answers other methods 405, malformed paths 400 and unknown artifacts 404", async () => {
    expect((await get({}, "POST")).status).toBe(405);
    const bad = await fetch(`${downloadsUrl}/downloads/agent/%E0%A4%A/linux-amd64`, {
      headers: { authorization: `Bearer ${nodeToken()}` },
    });
    expect(bad.status).toBe(400);
    const unknown = await fetch(`${downloadsUrl}${downloadPath("9.9.9", "linux-amd64")}`, {
      headers: { authorization: `Bearer ${nodeToken()}` },
    });
    expect(unknown.status).toBe(404);
  });
});

describe("the downloads listener over TLS with client certificates", () => {
  let tc: TestControl;
  let path: string;
  let content: Uint8Array;
  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    tc = await startTestControl({
      config: {
        release: { pins: [key.pin] },
        downloads: { addr: "127.0.0.1:0", requireAuth: true },
        tls: {
          agent: {
            cert: tlsPath("server"),
            key: tlsPath("server", "key"),
            clientCa: tlsPath("ca"),
          },
          downloads: {
            cert: tlsPath("server"),
            key: tlsPath("server", "key"),
            clientCa: tlsPath("ca"),
          },
        },
      },
    });
    const release = await registerTestRelease(tc, { version: "1.2.0", sequence: 12, key });
    content = release.files.get("linux-amd64") ?? new Uint8Array();
    path = downloadPath("1.2.0", "linux-amd64");
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const httpsGet = (client?: "node-a" | "rogue-a") =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      const req = httpsRequest(
        `${tc.control.downloadsUrl}${path}`,
        {
          ca: tlsFile("ca"),
          ...(client ? { cert: tlsFile(client), key: tlsFile(client, "key") } : {}),
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end();
    });

  it("serves HTTPS, authenticating a node by its client certificate alone", async () => {
    expect(tc.control.downloadsUrl).toMatch(/^https:\/\//);
    const { status, body } = await httpsGet("node-a");
    expect(status).toBe(200);
    expect(body.equals(Buffer.from(content))).toBe(true);
  });

  it("refuses a client with neither a certificate nor a token, or a certificate of another CA (401)", async () => {
    const none = await httpsGet();
    expect(none.status).toBe(401);
    expect(none.body.toString()).toMatch(/a node token .* or the node's client certificate/);
    expect((await httpsGet("rogue-a")).status).toBe(401);
  });

  it("refuses a revoked node's certificate (401), as the agent stream does", async () => {
    const stream = openRawStream(tc.agentAddress, undefined, channelCredentials("node-a"));
    stream.send(hello(NODE_A));
    expect((await stream.next(30_000)).body.case).toBe("welcome");
    expect((await httpsGet("node-a")).status).toBe(200);
    await tc.client(NodeService).revokeNode({ nodeId: NODE_A, reason: "stolen host" });
    await stream.ended;
    expect((await httpsGet("node-a")).status).toBe(401);
  });
});
