import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { downloadAuthorization, fetchArtifact } from "../../../agent/core/download.js";

describe("downloadAuthorization", () => {
  it.each<[string, string, string | undefined, string | undefined]>([
    [
      "http://10.0.0.5:7081/downloads/agent/2.0.0/linux-amd64",
      "10.0.0.5:7443",
      "ant.x.y",
      "Bearer ant.x.y",
    ],
    ["https://control.example:443/d", "control.example:7443", "ant.x.y", "Bearer ant.x.y"],
    ["http://[::1]:7081/d", "[::1]:7443", "ant.x.y", "Bearer ant.x.y"],
    ["https://cdn.example/agent-2.0.0", "control.example:7443", "ant.x.y", undefined],
    ["http://10.0.0.5:7081/d", "10.0.0.5:7443", undefined, undefined],
    ["not a url", "10.0.0.5:7443", "ant.x.y", undefined],
  ])("for %s from a stream to %s sends %s → %s", (url, server, token, expected) => {
    expect(downloadAuthorization(url, server, token)).toBe(expected);
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
      5_000,
      new AbortController().signal,
      "Bearer t",
    );
    expect(result.ok).toBe(true);
    expect(seen).toHaveLength(4);
    expect(seen.every((h) => h.authorization === "Bearer t")).toBe(true);
  });

  it("gives up as download_failed when the server stays busy", async () => {
    const { url, seen } = await busyServer(1000, Buffer.from("x"));
    const result = await fetchArtifact(url, 1, 5_000, new AbortController().signal);
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(seen.length).toBe(11);
    expect(seen[0]?.authorization).toBeUndefined();
  });
});
