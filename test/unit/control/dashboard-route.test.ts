import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../control/log.js";
import { type BundledAsset, type DashboardBundle, lazyBundle } from "../../../control/ui/bundle.js";
import { dashboardRoute } from "../../../control/ui/route.js";

function asset(name: string, contentType: string, text: string): BundledAsset {
  const body = Buffer.from(text);
  return { name, contentType, body, gzipped: gzipSync(body), etag: `"${name}"` };
}

const BUNDLE: DashboardBundle = {
  script: asset("main-abc.js", "text/javascript; charset=utf-8", "console.log(1)"),
  style: asset("app-def.css", "text/css; charset=utf-8", "body{}"),
};

describe("the /ui route", () => {
  let server: Server;
  let base = "";
  let builds = 0;
  let failNext = true;
  beforeAll(async () => {
    const bundle = lazyBundle(async () => {
      builds += 1;
      if (failNext) {
        failNext = false;
        throw new Error("esbuild: a syntax error");
      }
      return BUNDLE;
    });
    const route = dashboardRoute({ log: createLogger({ level: "silent" }), bundle });
    server = createServer((req, res) => {
      void Promise.resolve(route(req, res)).then((served) => {
        if (!served) res.writeHead(418).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers 500 when the bundle fails to build, and builds again on the next request", async () => {
    const failed = await fetch(`${base}/ui/`);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toContain("could not be built");
    const page = await fetch(`${base}/ui/`);
    expect(page.status).toBe(200);
    await fetch(`${base}/ui/`);
    expect(builds).toBe(2);
  });

  it("serves the page naming the hashed assets, never cached, with the security headers", async () => {
    const page = await fetch(`${base}/ui/`);
    const html = await page.text();
    expect(html).toContain('src="assets/main-abc.js"');
    expect(html).toContain('href="assets/app-def.css"');
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; script-src 'self'/,
    );
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("serves an asset gzipped when asked, plain otherwise, and 304 for its ETag", async () => {
    // fetch decompresses the body and keeps the header that says it was compressed.
    const zipped = await fetch(`${base}/ui/assets/main-abc.js`, {
      headers: { "accept-encoding": "gzip" },
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(await zipped.text()).toBe("console.log(1)");
    const plain = await fetch(`${base}/ui/assets/main-abc.js`, {
      headers: { "accept-encoding": "identity" },
    });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-length")).toBe(String("console.log(1)".length));
    const cached = await fetch(`${base}/ui/assets/main-abc.js`, {
      headers: { "if-none-match": '"main-abc.js"' },
    });
    expect(cached.status).toBe(304);
    const css = await fetch(`${base}/ui/assets/app-def.css`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  it.each([
    ["GET", "/ui", 308],
    ["GET", "/ui/assets/main-old.js", 404],
    ["GET", "/ui/anything", 404],
    ["POST", "/ui/", 405],
    ["DELETE", "/ui/assets/main-abc.js", 405],
    ["HEAD", "/ui/", 200],
    ["GET", "/uix", 418],
    ["GET", "/healthz", 418],
  ])("%s %s answers %i (418: passed on)", async (method, path, status) => {
    const res = await fetch(`${base}${path}`, { method, redirect: "manual" });
    expect(res.status).toBe(status);
    if (status === 308) expect(res.headers.get("location")).toBe("/ui/");
  });
});
