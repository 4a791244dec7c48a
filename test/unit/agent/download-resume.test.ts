/**
 * What a resumed download continues and what it starts over, against a scripted HTTP origin:
 * a 200 to a range starts the kept bytes over, a 416 or a 206 of another range drops them,
 * kept bytes that fail the sha256 are fetched again from 0, cuts that keep nothing new are
 * bounded, a whole answer shorter than the signed size is not resumed, and the download area
 * holds only the artifact being fetched.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_DOWNLOAD_POLICY } from "../../../agent/core/download.js";
import { downloadResumable, MAX_FRUITLESS_RESUMES } from "../../../agent/core/download-resume.js";

const SIZE = 64 * 1024;
const BODY = randomBytes(SIZE);
const SHA = createHash("sha256").update(BODY).digest("hex");
const ETAG = '"v1"';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server | undefined;
let area = "";
/** Request headers seen, in order. */
let seen: IncomingMessage["headers"][] = [];

beforeEach(async () => {
  area = await mkdtemp(join(tmpdir(), "agent-downloads-"));
  seen = [];
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  await rm(area, { recursive: true, force: true });
});

/** Serves the n-th request with `answers[n]` (the last one again past the end). */
async function origin(...answers: Answer[]): Promise<string> {
  server = createServer((req, res) => {
    seen.push(req.headers);
    const answer = answers[Math.min(seen.length, answers.length) - 1];
    answer?.(req, res);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifact`;
}

/** 200 announcing the whole file, cut after `bytes`. */
const cutAfter =
  (bytes: number): Answer =>
  (_req, res) => {
    res.writeHead(200, { "content-length": SIZE, etag: ETAG });
    res.write(BODY.subarray(0, bytes));
    setTimeout(() => res.destroy(), 20);
  };
const whole: Answer = (_req, res) => {
  res.writeHead(200, { "content-length": SIZE, etag: ETAG }).end(BODY);
};
/** 206 from the asked offset, with the given Content-Range (default: the right one). */
const partial =
  (contentRange?: (from: number) => string): Answer =>
  (req, res) => {
    const from = Number(/bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1] ?? 0);
    res.writeHead(206, {
      "content-length": SIZE - from,
      "content-range": contentRange?.(from) ?? `bytes ${from}-${SIZE - 1}/${SIZE}`,
      etag: ETAG,
    });
    res.end(BODY.subarray(from));
  };

const NO_WAIT = { baseMs: 1, capMs: 1, resetAfterMs: 0 };

function download(url: string, partialDir: string | undefined = area) {
  return downloadResumable(
    {
      url,
      size: SIZE,
      sha256: SHA,
      policy: DEFAULT_DOWNLOAD_POLICY,
      partialDir,
      backoff: NO_WAIT,
    },
    new AbortController().signal,
  );
}

describe("a resumed download", () => {
  it("continues a cut body with Range and the kept ETag in If-Range", async () => {
    const result = await download(await origin(cutAfter(1000), partial()));
    expect(result.ok && result.artifact.sha256).toBe(SHA);
    expect(seen[1]).toMatchObject({ range: "bytes=1000-", "if-range": ETAG });
  });

  it("starts over cleanly when the origin answers its range 200", async () => {
    const result = await download(await origin(cutAfter(1000), whole));
    expect(result.ok && result.artifact.sha256).toBe(SHA);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.range).toBe("bytes=1000-");
  });

  it("asks again from 0 after a 416", async () => {
    const unsatisfiable: Answer = (_req, res) => {
      res.writeHead(416, { "content-range": `bytes */${SIZE}` }).end();
    };
    const result = await download(await origin(cutAfter(1000), unsatisfiable, whole));
    expect(result.ok && result.artifact.sha256).toBe(SHA);
    expect(seen.map((h) => h.range)).toEqual([undefined, "bytes=1000-", undefined]);
  });

  it("drops a 206 of another range than asked and asks again from 0", async () => {
    const wrong = partial(() => `bytes 0-${SIZE - 1}/${SIZE}`);
    const result = await download(await origin(cutAfter(1000), wrong, whole));
    expect(result.ok && result.artifact.sha256).toBe(SHA);
    expect(seen.map((h) => h.range)).toEqual([undefined, "bytes=1000-", undefined]);
  });

  it(`fails after ${MAX_FRUITLESS_RESUMES} cuts in a row that kept nothing new`, async () => {
    // The origin ignores ranges and cuts every answer at the same byte.
    const result = await download(await origin(cutAfter(1000)));
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(!result.ok && result.message).toMatch(/after 1000 of 65536 bytes/);
    expect(seen).toHaveLength(2 + MAX_FRUITLESS_RESUMES);
  });

  it("does not resume a whole answer shorter than the signed size", async () => {
    const short: Answer = (_req, res) => {
      res.writeHead(200, { "content-length": 100 }).end(BODY.subarray(0, 100));
    };
    const result = await download(await origin(short));
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(!result.ok && result.message).toMatch(/body ended after 100 of 65536 bytes$/);
    expect(seen).toHaveLength(1);
  });
});

describe("the download area", () => {
  it("fetches kept bytes that fail the sha256 again from 0, and succeeds", async () => {
    // Kept by an earlier run: 4 KiB of which a power cut left the last 1 KiB zeroed.
    const kept = Buffer.from(BODY.subarray(0, 4096));
    kept.fill(0, 3072);
    await writeFile(join(area, `${SHA}.part`), kept);
    const record = { sha256: SHA, size: SIZE, url: "", validator: { etag: ETAG } };
    await writeFile(join(area, `${SHA}.json`), JSON.stringify(record));
    const url = await origin(partial(), whole);
    const result = await download(url);
    expect(result.ok && result.artifact.sha256).toBe(SHA);
    expect(seen.map((h) => h.range)).toEqual(["bytes=4096-", undefined]);
    expect(await readdir(area)).toEqual([]);
  });

  it("removes what it kept for another artifact, and ignores a record of another size", async () => {
    const other = "0".repeat(64);
    await writeFile(join(area, `${other}.part`), Buffer.alloc(1000));
    await writeFile(join(area, `${SHA}.part`), BODY.subarray(0, 1000));
    const record = { sha256: SHA, size: SIZE + 1, url: "", validator: {} };
    await writeFile(join(area, `${SHA}.json`), JSON.stringify(record));
    const stop = new AbortController();
    const url = await origin(cutAfter(500));
    server?.on("request", () => {
      if (seen.length === 2) stop.abort();
    });
    const stopped = await downloadResumable(
      {
        url,
        size: SIZE,
        sha256: SHA,
        policy: DEFAULT_DOWNLOAD_POLICY,
        partialDir: area,
        backoff: NO_WAIT,
      },
      stop.signal,
    );
    expect(stopped.ok).toBe(false);
    expect(seen[0]?.range).toBeUndefined();
    expect((await readdir(area)).sort()).toEqual([`${SHA}.json`, `${SHA}.part`]);
  });

  it("fails download_failed, naming it, when the download area cannot be made", async () => {
    const file = join(area, "not-a-directory");
    await writeFile(file, "");
    const result = await download(await origin(whole), join(file, "downloads"));
    expect(result).toMatchObject({ ok: false, code: "download_failed" });
    expect(!result.ok && result.message).toContain(`the download area ${join(file, "downloads")}`);
    expect(seen).toHaveLength(0);
  });
});
