/**
 * A failed download names its cause: fetch reports every network error as "fetch failed",
 * and the Agent's message adds the socket's error and how far the download got.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_DOWNLOAD_POLICY, fetchArtifact } from "../../../agent/core/download.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifact`;
}

describe("download failure messages", () => {
  it("names the socket's error when the connection closes before a response", async () => {
    const url = await serve((req) => req.socket.end());
    const result = await fetchArtifact(
      url,
      1024,
      DEFAULT_DOWNLOAD_POLICY,
      new AbortController().signal,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.code).toBe("download_failed");
    expect(!result.ok && result.message).toMatch(
      /fetch failed \(UND_ERR_SOCKET other side closed\) before a response$/,
    );
  });

  it("says how many bytes came, and when the headers did, when the body is cut", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-length": 4096 });
      res.write(Buffer.alloc(1000));
      setTimeout(() => res.destroy(), 50);
    });
    const result = await fetchArtifact(
      url,
      4096,
      DEFAULT_DOWNLOAD_POLICY,
      new AbortController().signal,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(
      /\(UND_ERR_SOCKET other side closed\) after 1000 of 4096 bytes \(headers after \d+ ms\)$/,
    );
  });
});
