/**
 * An Agent with a client certificate (mTLS) presents it with a download only to an origin its
 * node token may go to (the stream's, `--download-origins`) over https: never to a mirror,
 * another port or scheme, or the target of a redirect off that origin. Every https download
 * trusts the stream's CA.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import {
  artifactOrigins,
  DEFAULT_DOWNLOAD_POLICY,
  downloadTls,
  trustedOrigins,
} from "../../../agent/core/download.js";
import { downloadAsNode } from "../../../agent/core/node-download.js";
import { tlsFile } from "../../fixtures/tls/index.js";

const IDENTITY = { ca: tlsFile("ca"), cert: tlsFile("node-a"), key: tlsFile("node-a", "key") };

describe("downloadTls presents the client certificate only to a trusted https origin", () => {
  const origins = trustedOrigins("control.example:7443", true, [
    "https://control.example:7081",
    "http://10.0.0.5:7081",
  ]);
  it.each<[string, "certificate" | "ca only" | "none"]>([
    ["https://control.example:7081/downloads/agent/2.0.0/linux-amd64", "certificate"],
    ["https://control.example:7443/d", "certificate"],
    // Another port, scheme or host than configured, or user information: never the certificate.
    ["https://control.example:7082/d", "ca only"],
    ["https://control.example/d", "ca only"],
    ["https://cdn.example/agent-2.0.0", "ca only"],
    ["https://user@control.example:7081/d", "none"],
    // Clear text carries no TLS at all.
    ["http://10.0.0.5:7081/d", "none"],
    ["http://control.example:7081/d", "none"],
    ["not a url", "none"],
  ])("for %s: %s", (url, expected) => {
    const tls = downloadTls(url, origins, IDENTITY);
    const got = tls === undefined ? "none" : tls.cert !== undefined ? "certificate" : "ca only";
    expect(got).toBe(expected);
    if (tls?.cert !== undefined) expect(tls.key).toBeDefined();
    if (tls !== undefined) expect(tls.ca).toBeDefined();
  });

  it("presents nothing without a certificate and key, and needs no CA to present one", () => {
    const url = "https://control.example:7081/d";
    expect(downloadTls(url, origins, undefined)).toBeUndefined();
    expect(downloadTls(url, origins, {})).toBeUndefined();
    const noCa = downloadTls(url, origins, { cert: IDENTITY.cert, key: IDENTITY.key });
    expect(noCa?.cert).toBeDefined();
    expect(noCa?.ca).toBeUndefined();
  });
});

describe("a download by a node with a client certificate", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  /**
   * An https server (Control's test certificate, asking for client certificates of the test
   * CA) answering `answer`; records the client certificate's subject of each request.
   */
  async function server(
    answer: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
  ) {
    const seen: Array<string | undefined> = [];
    const s = createServer(
      {
        cert: tlsFile("server"),
        key: tlsFile("server", "key"),
        ca: tlsFile("ca"),
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        seen.push(socket.authorized && peer.subject ? String(peer.subject.CN) : undefined);
        const { status, headers = {}, body = "" } = answer(req.url ?? "/");
        res.writeHead(status, { "content-length": Buffer.byteLength(body), ...headers });
        res.end(body);
      },
    );
    servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    const { port } = s.address() as AddressInfo;
    return { port, seen };
  }

  const download = (url: string, size: number, trusted: string, mirror: string) =>
    downloadAsNode(
      { url, size },
      {
        trustedOrigins: trustedOrigins("127.0.0.1:1", true, [trusted]),
        artifactOrigins: artifactOrigins({
          server: "127.0.0.1:1",
          tls: true,
          downloadOrigins: [trusted],
          mirrors: [mirror],
        }),
        policy: DEFAULT_DOWNLOAD_POLICY,
        nodeToken: undefined,
        tls: IDENTITY,
      },
      new AbortController().signal,
    );

  it("presents the certificate to its downloads origin, not to a mirror", async () => {
    const control = await server(() => ({ status: 200, body: "artifact" }));
    const mirror = await server(() => ({ status: 200, body: "artifact" }));
    const controlOrigin = `https://127.0.0.1:${control.port}`;
    const mirrorOrigin = `https://127.0.0.1:${mirror.port}`;
    const fromControl = await download(`${controlOrigin}/a`, 8, controlOrigin, mirrorOrigin);
    expect(fromControl.ok).toBe(true);
    expect(control.seen).toEqual(["host-a.example"]);
    const fromMirror = await download(`${mirrorOrigin}/a`, 8, controlOrigin, mirrorOrigin);
    // The mirror was reached over TLS trusting the stream's CA, and saw no certificate.
    expect(fromMirror.ok).toBe(true);
    expect(mirror.seen).toEqual([undefined]);
  });

  it("does not present it to the target of a redirect off its origin", async () => {
    const mirror = await server(() => ({ status: 200, body: "artifact" }));
    const mirrorOrigin = `https://127.0.0.1:${mirror.port}`;
    const control = await server(() => ({
      status: 302,
      headers: { location: `${mirrorOrigin}/a` },
    }));
    const controlOrigin = `https://127.0.0.1:${control.port}`;
    const result = await download(`${controlOrigin}/a`, 8, controlOrigin, mirrorOrigin);
    expect(result.ok).toBe(true);
    expect(control.seen).toEqual(["host-a.example"]);
    expect(mirror.seen).toEqual([undefined]);
  });

  it("keeps the refusals and failures of every download: too large, HTTP errors, 503 retries", async () => {
    let calls = 0;
    const control = await server((path) => {
      calls++;
      if (path === "/busy" && calls === 1) {
        return { status: 503, headers: { "retry-after": "0" }, body: "busy" };
      }
      if (path === "/missing") return { status: 404, body: "no" };
      return { status: 200, body: "artifact" };
    });
    const origin = `https://127.0.0.1:${control.port}`;
    expect(await download(`${origin}/busy`, 8, origin, origin)).toMatchObject({ ok: true });
    expect(calls).toBe(2);
    expect(await download(`${origin}/big`, 4, origin, origin)).toMatchObject({
      ok: false,
      code: "artifact_too_large",
    });
    expect(await download(`${origin}/missing`, 8, origin, origin)).toMatchObject({
      ok: false,
      code: "download_failed",
      message: expect.stringMatching(/HTTP 404/),
    });
    expect(await download(`${origin}/short`, 20, origin, origin)).toMatchObject({
      ok: false,
      code: "download_failed",
    });
    const outside = await download("https://elsewhere.example/a", 8, origin, origin);
    expect(outside).toMatchObject({ ok: false, code: "artifact_origin_refused" });
    expect(control.seen.every((cn) => cn === "host-a.example")).toBe(true);
  });
});
