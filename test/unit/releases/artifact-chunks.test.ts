import { describe, expect, it } from "vitest";
import {
  type ChunkQueryable,
  createArtifactChunks,
} from "../../../control/releases/artifact-chunks.js";

/** A fake pool over one stored file that answers substring() as PostgreSQL does (1-based). */
function fakePool(content: Buffer, delayMs = 0) {
  const stats = { queries: 0, inFlight: 0, maxInFlight: 0 };
  const pool: ChunkQueryable = {
    async query<R extends Record<string, unknown>>(text: string, values: unknown[]) {
      stats.queries += 1;
      stats.inFlight += 1;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      await new Promise((r) => setTimeout(r, delayMs));
      stats.inFlight -= 1;
      if (values[0] !== "sha") return { rows: [] as R[] };
      if (text.startsWith("select size"))
        return { rows: [{ size: String(content.length) }] as unknown as R[] };
      const from = Number(values[1]) - 1;
      const length = Number(values[2]);
      return { rows: [{ piece: content.subarray(from, from + length) }] as unknown as R[] };
    },
  };
  return { pool, stats };
}

describe("artifact chunks", () => {
  const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

  it("reads a file as fixed-size chunks, the last one short and empty past the end", async () => {
    const { pool } = fakePool(content);
    const chunks = createArtifactChunks({ pool, chunkBytes: 300 });
    expect(await chunks.size("sha")).toBe(1000);
    expect(await chunks.size("missing")).toBeUndefined();
    const parts = await Promise.all([0, 1, 2, 3].map((i) => chunks.chunk("sha", i)));
    expect(parts.map((p) => p.length)).toEqual([300, 300, 300, 100]);
    expect(Buffer.concat(parts).equals(content)).toBe(true);
    expect((await chunks.chunk("sha", 4)).length).toBe(0);
  });

  it("shares one query among concurrent reads of a chunk, and serves repeats from the cache", async () => {
    const { pool, stats } = fakePool(content, 5);
    const chunks = createArtifactChunks({ pool, chunkBytes: 100 });
    await Promise.all(Array.from({ length: 20 }, () => chunks.chunk("sha", 3)));
    expect(stats.queries).toBe(1);
    await chunks.chunk("sha", 3);
    expect(stats.queries).toBe(1);
  });

  it("keeps at most cacheBytes, dropping the least recently used chunk", async () => {
    const { pool, stats } = fakePool(content);
    const chunks = createArtifactChunks({ pool, chunkBytes: 100, cacheBytes: 250 });
    await chunks.chunk("sha", 0);
    await chunks.chunk("sha", 1);
    await chunks.chunk("sha", 0); // 0 is now the most recent
    await chunks.chunk("sha", 2); // evicts 1
    expect(chunks.cachedBytes()).toBe(200);
    const before = stats.queries;
    await chunks.chunk("sha", 0);
    expect(stats.queries).toBe(before);
    await chunks.chunk("sha", 1);
    expect(stats.queries).toBe(before + 1);
  });

  it("runs at most maxQueries chunk queries at once", async () => {
    const { pool, stats } = fakePool(content, 10);
    const chunks = createArtifactChunks({ pool, chunkBytes: 10, cacheBytes: 0, maxQueries: 3 });
    const parts = await Promise.all(Array.from({ length: 30 }, (_, i) => chunks.chunk("sha", i)));
    expect(stats.maxInFlight).toBe(3);
    expect(Buffer.concat(parts).subarray(0, 300).equals(content.subarray(0, 300))).toBe(true);
  });

  it("fails a chunk of a file that is no longer stored, and reads it again next time", async () => {
    const { pool, stats } = fakePool(content);
    const chunks = createArtifactChunks({ pool, chunkBytes: 100 });
    await expect(chunks.chunk("gone", 0)).rejects.toThrow(/no longer stored/);
    await expect(chunks.chunk("gone", 0)).rejects.toThrow(/no longer stored/);
    expect(stats.queries).toBe(2);
  });
});
