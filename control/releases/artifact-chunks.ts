/**
 * Reads artifact files out of PostgreSQL in fixed-size chunks, so a download holds one chunk
 * at a time instead of the whole file. Chunks are read with `substring(content from … for …)`
 * (the `content` column is stored uncompressed out of line since migration 0004, so
 * PostgreSQL fetches only the TOAST pieces a chunk covers). Guarantees:
 * - at most `cacheBytes` of chunks stay in memory (least recently used go first), shared by
 *   every download, so a fleet fetching one release mostly reads memory;
 * - concurrent reads of the same chunk share one query;
 * - at most `maxQueries` chunk queries run at once, so downloads never take every
 *   connection of the pool the campaign worker and the agent hub also need.
 */

/** The part of a `pg.Pool` this needs (a fake in unit tests). */
export interface ChunkQueryable {
  query<R extends Record<string, unknown>>(
    text: string,
    values: unknown[],
  ): Promise<{ readonly rows: R[] }>;
}

/** Options of {@link createArtifactChunks}. */
export interface ArtifactChunksOptions {
  readonly pool: ChunkQueryable;
  /** Bytes per chunk (default 512 KiB). */
  readonly chunkBytes?: number;
  /** Bytes of chunks kept for later downloads (default 32 MiB; 0 keeps none). */
  readonly cacheBytes?: number;
  /** Chunk queries in flight at once (default 4). */
  readonly maxQueries?: number;
}

/** Chunked, cached reads of stored artifact files. */
export interface ArtifactChunks {
  readonly chunkBytes: number;
  /** The stored size of the file with this sha256, or undefined when none is stored. */
  size(sha256: string): Promise<number | undefined>;
  /**
   * Chunk `index` (bytes `index × chunkBytes` onwards, at most `chunkBytes`). Empty past the
   * end of the file; callers treat a short file as an error.
   */
  chunk(sha256: string, index: number): Promise<Buffer>;
  /** Bytes held by the cache now. */
  cachedBytes(): number;
}

/** Builds the chunk reader over `pool`. */
export function createArtifactChunks(options: ArtifactChunksOptions): ArtifactChunks {
  const chunkBytes = options.chunkBytes ?? 512 * 1024;
  const cacheBytes = options.cacheBytes ?? 32 * 1024 * 1024;
  const gate = semaphore(options.maxQueries ?? 4);
  const cache = new Map<string, Buffer>();
  const inflight = new Map<string, Promise<Buffer>>();
  let cached = 0;

  const remember = (key: string, bytes: Buffer) => {
    if (bytes.byteLength > cacheBytes) return;
    while (cached + bytes.byteLength > cacheBytes) {
      const oldest = cache.entries().next().value;
      if (!oldest) break;
      cache.delete(oldest[0]);
      cached -= oldest[1].byteLength;
    }
    cache.set(key, bytes);
    cached += bytes.byteLength;
  };

  const read = async (sha256: string, index: number): Promise<Buffer> => {
    await gate.acquire();
    try {
      const result = await options.pool.query<{ piece: Buffer | null }>(
        "select substring(content from $2::int for $3::int) as piece from artifact_files where sha256 = $1",
        [sha256, index * chunkBytes + 1, chunkBytes],
      );
      const piece = result.rows[0]?.piece;
      if (!piece) throw new Error(`artifact file ${sha256} is no longer stored`);
      return piece;
    } finally {
      gate.release();
    }
  };

  return {
    chunkBytes,
    async size(sha256) {
      const result = await options.pool.query<{ size: string | number }>(
        "select size from artifact_files where sha256 = $1",
        [sha256],
      );
      const row = result.rows[0];
      return row ? Number(row.size) : undefined;
    },
    chunk(sha256, index) {
      const key = `${sha256}:${index}`;
      const hit = cache.get(key);
      if (hit) {
        cache.delete(key); // most recently used last
        cache.set(key, hit);
        return Promise.resolve(hit);
      }
      let pending = inflight.get(key);
      if (!pending) {
        pending = read(sha256, index).then(
          (bytes) => {
            inflight.delete(key);
            remember(key, bytes);
            return bytes;
          },
          (error: unknown) => {
            inflight.delete(key);
            throw error;
          },
        );
        inflight.set(key, pending);
      }
      return pending;
    },
    cachedBytes: () => cached,
  };
}

/** A counting semaphore without timeouts (each holder is one short query). */
function semaphore(limit: number): { acquire(): Promise<void>; release(): void } {
  let held = 0;
  const waiting: Array<() => void> = [];
  return {
    acquire() {
      if (held < limit) {
        held += 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next)
        next(); // the slot passes straight to the next waiter
      else held -= 1;
    },
  };
}
