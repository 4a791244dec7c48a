/**
 * The plain HTTP mirror of the tests and benchmarks answers ranges as a static server
 * (nginx, object storage) does, so an Agent resumes from it: one byte range 206 with
 * `Content-Range`, a range past the end 416 with `bytes *\/size`, `If-Range` with another
 * validator the whole file; an ETag and Last-Modified that change when the file is replaced.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type StaticMirror, startStaticMirror } from "../../../agent-sim/bench/static-mirror.js";

const BODY = Buffer.from("0123456789abcdefghij");
let mirror: StaticMirror | undefined;
afterEach(async () => {
  await mirror?.close();
  mirror = undefined;
});

async function start(): Promise<StaticMirror> {
  mirror = await startStaticMirror(new Map([["/a", BODY]]));
  return mirror;
}

const get = (m: StaticMirror, headers: Record<string, string> = {}, method = "GET") =>
  fetch(`${m.url}/a`, { method, headers });

describe("the static mirror's ranges", () => {
  it("answers a whole GET 200 with Accept-Ranges, an ETag and Last-Modified", async () => {
    const response = await get(await start());
    expect(response.status).toBe(200);
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(response.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(response.headers.get("last-modified")).toMatch(/GMT$/);
    expect(Buffer.from(await response.arrayBuffer()).equals(BODY)).toBe(true);
  });

  it.each([
    ["bytes=5-", 5, 19],
    ["bytes=0-0", 0, 0],
    ["bytes=-3", 17, 19],
    ["bytes=15-100", 15, 19],
  ])("answers %s with 206 and exactly those bytes", async (range, first, last) => {
    const response = await get(await start(), { range });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(`bytes ${first}-${last}/20`);
    expect(Number(response.headers.get("content-length"))).toBe(last - first + 1);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(BODY.subarray(first, last + 1))).toBe(true);
  });

  it("answers a range past the end 416 with the size", async () => {
    const response = await get(await start(), { range: "bytes=20-" });
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe("bytes */20");
  });

  it("serves the range under a matching If-Range, the whole file once the file changed", async () => {
    const m = await start();
    const etag = (await get(m)).headers.get("etag") ?? "";
    const same = await get(m, { range: "bytes=10-", "if-range": etag });
    expect(same.status).toBe(206);
    await same.arrayBuffer();
    m.put("/a", Buffer.from(BODY));
    const changed = await get(m, { range: "bytes=10-", "if-range": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(Buffer.from(await changed.arrayBuffer()).equals(BODY)).toBe(true);
  });

  it("answers HEAD with a range's headers and no body", async () => {
    const response = await get(await start(), { range: "bytes=2-4" }, "HEAD");
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe("bytes 2-4/20");
    expect(await response.text()).toBe("");
  });
});
