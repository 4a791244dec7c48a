/**
 * A download whose connection is closed before any response is tried again on another: an
 * HTTP/1.1 server may close a kept-alive connection just as a client sends on it (RFC 9110
 * §9.2.2 lets a client retry an idempotent request then), which is no failure of the source.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_DOWNLOAD_POLICY,
  fetchArtifact,
  MAX_CONNECTION_LOST_RETRIES,
} from "../../../agent/core/download.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

const BODY = Buffer.from("agent 2.0.0 for linux-amd64\n");

/** Closes the connection of the first `lost` requests unanswered, then serves BODY. */
async function serve(lost: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    requests += 1;
    if (requests <= lost) {
      req.socket.destroy();
      return;
    }
    res.end(BODY);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifact`;
  return { url, requests: () => requests };
}

const get = (url: string) =>
  fetchArtifact(url, BODY.byteLength, DEFAULT_DOWNLOAD_POLICY, new AbortController().signal);

describe("a download whose connection is lost before a response", () => {
  it("is tried again on a new connection and succeeds", async () => {
    const { url, requests } = await serve(1);
    const result = await get(url);
    expect(result.ok).toBe(true);
    expect(result.ok && Buffer.from(result.artifact.bytes).equals(BODY)).toBe(true);
    expect(requests()).toBe(2);
  });

  it(`fails download_failed after ${MAX_CONNECTION_LOST_RETRIES} more tries, never more`, async () => {
    const { url, requests } = await serve(100);
    const result = await get(url);
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(!result.ok && result.message).toMatch(/before a response$/);
    expect(requests()).toBe(1 + MAX_CONNECTION_LOST_RETRIES);
  });

  it("is not tried again when the body was cut after the response began", async () => {
    let requests = 0;
    server = createServer((_req, res) => {
      requests += 1;
      res.writeHead(200, { "content-length": 4096 });
      res.write(Buffer.alloc(100));
      setTimeout(() => res.destroy(), 20);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifact`;
    const result = await fetchArtifact(
      url,
      4096,
      DEFAULT_DOWNLOAD_POLICY,
      new AbortController().signal,
    );
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(requests).toBe(1);
  });
});
