import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_DOWNLOAD_POLICY,
  downloadAuthorization,
  fetchArtifact,
  trustedOrigins,
} from "../../../agent/core/download.js";

describe("downloadAuthorization sends the node token only to a configured origin", () => {
  const origins = trustedOrigins("10.0.0.5:7443", false, [
    "http://10.0.0.5:7081",
    "https://control.example",
  ]);
  it.each<[string, string | undefined, string | undefined]>([
    ["http://10.0.0.5:7081/downloads/agent/2.0.0/linux-amd64", "ant.x.y", "Bearer ant.x.y"],
    ["https://control.example:443/d", "ant.x.y", "Bearer ant.x.y"],
    ["http://10.0.0.5:7443/d", "ant.x.y", "Bearer ant.x.y"],
    // Same host, another port or scheme than configured: never.
    ["http://10.0.0.5:7082/d", "ant.x.y", undefined],
    ["http://10.0.0.5:80/d", "ant.x.y", undefined],
    ["https://10.0.0.5:7081/d", "ant.x.y", undefined],
    ["http://control.example/d", "ant.x.y", undefined],
    ["https://cdn.example/agent-2.0.0", "ant.x.y", undefined],
    ["http://user@10.0.0.5:7081/d", "ant.x.y", undefined],
    ["http://10.0.0.5:7081/d", undefined, undefined],
    ["not a url", "ant.x.y", undefined],
  ])("for %s with token %s sends %s", (url, token, expected) => {
    expect(downloadAuthorization(url, origins, token)).toBe(expected);
  });

  it("takes Control's own origin from the stream's scheme, host and port", () => {
    expect(trustedOrigins("[::1]:7443", true, [])).toEqual(["https://[::1]:7443"]);
    expect(trustedOrigins("control.example:443", true, [])).toEqual(["https://control.example"]);
  });
});

describe("fetchArtifact against a busy server", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A server answering 503 (Retry-After 0) `busy` times, then the body; records headers. */
  async function busyServer(busy: number, body: Buffer) {
    const seen: IncomingHttpHeaders[] = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (seen.length <= busy) {
        res.writeHead(503, { "retry-after": "0" }).end("busy\n");
        return;
      }
      res.writeHead(200, { "content-length": body.length }).end(body);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/a`, seen };
  }

  it("waits out 503s with Retry-After and sends its credential each time", async () => {
    const body = Buffer.from("artifact bytes");
    const { url, seen } = await busyServer(3, body);
    const result = await fetchArtifact(
      url,
      body.length,
      DEFAULT_DOWNLOAD_POLICY,
      new AbortController().signal,
      "Bearer t",
    );
    expect(result.ok).toBe(true);
    expect(seen).toHaveLength(4);
    expect(seen.every((h) => h.authorization === "Bearer t")).toBe(true);
  });

  it("does not follow a redirect while it carries a credential", async () => {
    const seen: IncomingHttpHeaders[] = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === "/a") res.writeHead(302, { location: "/b" }).end();
      else res.writeHead(200, { "content-length": 1 }).end("x");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/a`;
    const signal = new AbortController().signal;
    const result = await fetchArtifact(url, 1, DEFAULT_DOWNLOAD_POLICY, signal, "Bearer t");
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(seen).toHaveLength(1);
  });

  it("gives up as download_failed when the server stays busy", async () => {
    const { url, seen } = await busyServer(1000, Buffer.from("x"));
    const result = await fetchArtifact(
      url,
      1,
      DEFAULT_DOWNLOAD_POLICY,
      new AbortController().signal,
    );
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(seen.length).toBe(11);
    expect(seen[0]?.authorization).toBeUndefined();
  });
});
