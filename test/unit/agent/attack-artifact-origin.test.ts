/**
 * Attack (an artifact URL anywhere): the Agent fetched whatever URL a release's operation
 * named (the signed manifest's or the operation's own): a hostile Control could make every
 * node GET the cloud metadata address (169.254.169.254), another host, or a trusted origin
 * that redirects elsewhere, and learn from the reports what answered.
 *
 * Expected: an artifact URL outside the origins the node trusts (its Control's downloads
 * origin and the configured mirrors) is refused `artifact_origin_refused` before any request
 * is made, and a redirect to another origin is refused before it is followed.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAgentArgs } from "../../../agent/cli-args.js";
import { fetchArtifact } from "../../../agent/core/download.js";
import {
  type ArtifactOrigins,
  artifactOriginRefusal,
  artifactOrigins,
} from "../../../agent/core/download-origins.js";
import { makeKeys } from "../../helpers/releases.js";

const POLICY = { stallMs: 5_000, graceMs: 5_000, minBytesPerSecond: 1 };
const BODY = new TextEncoder().encode("artifact!");

/** A server answering `/a` with BODY and `/to?url=U` with a 302 to U; counts requests. */
async function server(): Promise<{ origin: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const http: Server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/to") {
      res.writeHead(302, { location: url.searchParams.get("url") ?? "/" }).end();
      return;
    }
    res.writeHead(200, { "content-length": BODY.byteLength }).end(BODY);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    origin,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

let control: Awaited<ReturnType<typeof server>>;
let elsewhere: Awaited<ReturnType<typeof server>>;
let trusted: ArtifactOrigins;
beforeAll(async () => {
  control = await server();
  elsewhere = await server();
  // Control's stream on 127.0.0.1:7443, its downloads origin configured: elsewhere's port is
  // another origin.
  trusted = artifactOrigins({
    server: "127.0.0.1:7443",
    tls: false,
    downloadOrigins: [control.origin],
    mirrors: [],
  });
});
afterAll(async () => {
  await control.close();
  await elsewhere.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const check = (url: string) => artifactOriginRefusal(url, trusted);

describe("an artifact URL outside the origins the node trusts", () => {
  it.each([
    ["the cloud metadata address", "http://169.254.169.254/latest/meta-data/iam/"],
    ["the metadata address written in hex", "http://0xa9.0xfe.0xa9.0xfe/latest/"],
    ["another host", "https://evil.example/agent"],
    ["another scheme on Control's downloads host", "file:///etc/shadow"],
    ["a data: URL", "data:application/octet-stream;base64,AAAA"],
    ["a URL with user information", "http://user:pw@127.0.0.1:1/agent"],
  ])("is refused before any request: %s", async (_name, url) => {
    const spy = vi.spyOn(globalThis, "fetch");
    const result = await fetchArtifact(
      url,
      BODY.byteLength,
      POLICY,
      new AbortController().signal,
      undefined,
      check,
    );
    expect(result).toMatchObject({ ok: false, code: "artifact_origin_refused" });
    expect(spy).not.toHaveBeenCalled();
  });

  it("is refused on another port of Control's downloads host, which the server never sees", async () => {
    const result = await fetchArtifact(
      `${elsewhere.origin}/a`,
      BODY.byteLength,
      POLICY,
      new AbortController().signal,
      undefined,
      check,
    );
    expect(result).toMatchObject({ ok: false, code: "artifact_origin_refused" });
    expect(result.ok ? "" : result.message).toMatch(/not one of the origins this node trusts/);
    expect(elsewhere.hits).toEqual([]);
  });

  it("is refused when a trusted origin redirects to it, before the redirect is followed", async () => {
    const before = elsewhere.hits.length;
    const target = encodeURIComponent(`${elsewhere.origin}/a`);
    const result = await fetchArtifact(
      `${control.origin}/to?url=${target}`,
      BODY.byteLength,
      POLICY,
      new AbortController().signal,
      undefined,
      check,
    );
    expect(result).toMatchObject({ ok: false, code: "artifact_origin_refused" });
    expect(result.ok ? "" : result.message).toMatch(/redirect/);
    expect(elsewhere.hits.length).toBe(before);
  });

  it("is refused when a trusted origin redirects to the metadata address", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    const target = encodeURIComponent("http://169.254.169.254/latest/");
    const result = await fetchArtifact(
      `${control.origin}/to?url=${target}`,
      BODY.byteLength,
      POLICY,
      new AbortController().signal,
      undefined,
      check,
    );
    expect(result).toMatchObject({ ok: false, code: "artifact_origin_refused" });
    expect(spy).toHaveBeenCalledTimes(1);
  });
});

describe("an artifact URL the node trusts", () => {
  it("is fetched from Control's downloads origin, following a redirect that stays there", async () => {
    const result = await fetchArtifact(
      `${control.origin}/to?url=${encodeURIComponent("/a")}`,
      BODY.byteLength,
      POLICY,
      new AbortController().signal,
      undefined,
      check,
    );
    expect(result).toMatchObject({ ok: true });
  });

  it("is fetched from a configured mirror", async () => {
    const withMirror = artifactOrigins({
      server: "127.0.0.1:7443",
      tls: false,
      downloadOrigins: [control.origin],
      mirrors: [elsewhere.origin],
    });
    expect(artifactOriginRefusal(`${elsewhere.origin}/a`, withMirror)).toBeUndefined();
  });

  it("without configured origins, is any port of Control's own host (its downloads listener), nothing else", () => {
    const bare = artifactOrigins({
      server: "control.example:7443",
      tls: true,
      downloadOrigins: [],
      mirrors: [],
    });
    expect(artifactOriginRefusal("https://control.example:7081/downloads/agent/1/p", bare)).toBe(
      undefined,
    );
    expect(artifactOriginRefusal("http://control.example:7080/downloads/agent/1/p", bare)).toBe(
      undefined,
    );
    expect(artifactOriginRefusal("https://evil.example/agent", bare)).toMatch(/evil\.example/);
    expect(artifactOriginRefusal("http://169.254.169.254/", bare)).toBeDefined();
  });

  it("includes the TUF metadata's origin (Control serves the targets beside it)", () => {
    const withTuf = artifactOrigins({
      server: "control.example:7443",
      tls: true,
      downloadOrigins: ["https://control.example:7081"],
      mirrors: [],
      tufUrl: "https://tuf.example:8443/tuf/",
    });
    expect(artifactOriginRefusal("https://tuf.example:8443/targets/x", withTuf)).toBeUndefined();
    expect(artifactOriginRefusal("https://control.example:7080/x", withTuf)).toBeDefined();
  });
});

describe("--artifact-mirrors", () => {
  it("names the mirrors' origins (which never receive the node token)", async () => {
    const [key] = await makeKeys(1);
    const parsed = parseAgentArgs([
      "run",
      "--install-dir",
      "/tmp/x",
      "--server",
      "control.example:7443",
      "--pins",
      key?.pin ?? "",
      "--artifact-mirrors",
      "http://mirror.example:8080,https://cdn.example",
    ]);
    expect(parsed).toMatchObject({
      ok: true,
      command: {
        options: { artifactMirrors: ["http://mirror.example:8080", "https://cdn.example"] },
      },
    });
    const bad = parseAgentArgs([
      "run",
      "--install-dir",
      "/tmp/x",
      "--server",
      "control.example:7443",
      "--pins",
      key?.pin ?? "",
      "--artifact-mirrors",
      "https://cdn.example/path",
    ]);
    expect(bad).toMatchObject({ ok: false, message: expect.stringMatching(/--artifact-mirrors/) });
  });
});
