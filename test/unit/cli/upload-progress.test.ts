import { describe, expect, it } from "vitest";
import { formatBytes } from "../../../cli/bytes.js";
import {
  chunked,
  PROGRESS_MIN_BYTES,
  progressHttpClient,
  progressLine,
} from "../../../cli/upload-progress.js";

async function* of(...chunks: Uint8Array[]) {
  for (const c of chunks) yield c;
}

async function collect(body: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of body) out.push(c);
  return out;
}

describe("a request body written in pieces", () => {
  it("yields every byte, in order, in pieces no larger than asked, counting each after it was taken", async () => {
    const a = Uint8Array.from({ length: 10 }, (_, i) => i);
    const b = Uint8Array.from({ length: 3 }, (_, i) => 100 + i);
    const counts: number[] = [];
    const pieces = await collect(chunked(of(a, b), 4, (n) => counts.push(n)));
    expect(pieces.map((p) => p.length)).toEqual([4, 4, 2, 3]);
    expect(Buffer.concat(pieces)).toEqual(Buffer.concat([a, b]));
    expect(counts).toEqual([4, 8, 10, 13]);
  });

  it("passes a request without a body through untouched, and wraps one with a body", async () => {
    const seen: unknown[] = [];
    const inner = async (req: { body?: AsyncIterable<Uint8Array> }) => {
      seen.push(req.body === undefined ? "none" : (await collect(req.body)).length);
      return { status: 200, header: new Headers(), body: of(), trailer: new Headers() };
    };
    const sent: number[] = [];
    const client = progressHttpClient(inner, (n) => sent.push(n));
    const base = { url: "http://x/y", method: "POST", header: new Headers() };
    await client(base);
    await client({ ...base, body: of(new Uint8Array(3 << 20)) });
    expect(seen).toEqual(["none", 3]);
    expect(sent).toEqual([1 << 20, 2 << 20, 3 << 20]);
  });
});

describe("the progress line", () => {
  const sink = (isTTY: boolean) => {
    const lines: string[] = [];
    return { lines, isTTY, write: (t: string) => lines.push(t) };
  };

  it("shows nothing for a small body", () => {
    const out = sink(false);
    const line = progressLine(out, "uploading", PROGRESS_MIN_BYTES - 1, () => 0);
    line.report(PROGRESS_MIN_BYTES - 1);
    line.done();
    expect(out.lines).toEqual([]);
  });

  it("prints one line per tenth off a terminal, then what was sent and that Control verifies it", () => {
    const out = sink(false);
    let now = 0;
    const total = 100 << 20;
    const line = progressLine(out, "uploading 2 artifacts", total, () => now);
    for (let sent = 1 << 20; sent <= total; sent += 1 << 20) {
      now += 100;
      line.report(sent);
    }
    line.done();
    expect(out.lines).toHaveLength(10);
    expect(out.lines[0]).toMatch(
      /^uploading 2 artifacts: 10% \(10\.0 MiB of 100\.0 MiB, 10\.0 MiB\/s\)\n$/,
    );
    expect(out.lines[8]).toMatch(/^uploading 2 artifacts: 90% /);
    expect(out.lines[9]).toBe(
      "uploading 2 artifacts: 100.0 MiB sent in 10.0 s; waiting for Control to verify and store it\n",
    );
  });

  it("rewrites one line on a terminal, at most every 200 ms, and ends it with a newline", () => {
    const out = sink(true);
    let now = 0;
    const total = 10 << 20;
    const line = progressLine(out, "uploading", total, () => now);
    for (let i = 1; i <= 10; i++) {
      now += 50;
      line.report(i << 20);
    }
    line.done();
    expect(out.lines.slice(0, -1).every((l) => l.startsWith("\r") && !l.includes("\n"))).toBe(true);
    expect(out.lines.length).toBeLessThan(10);
    expect(out.lines.at(-1)).toMatch(/^\ruploading: 10\.0 MiB sent in 0\.5 s; .*\n$/);
  });
});

describe("sizes", () => {
  it("reads in binary units, whole bytes below a KiB", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(512.4)).toBe("512 B");
    expect(formatBytes(64 * 1024)).toBe("64.0 KiB");
    expect(formatBytes(1.5 * 1024 ** 3)).toBe("1.5 GiB");
  });
});
