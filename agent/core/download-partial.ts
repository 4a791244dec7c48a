/**
 * The bytes of an artifact download kept so far, so that a download cut short goes on from
 * where it stopped: in memory for one download, or in a download area on disk (the Agent's
 * `<install dir>/downloads`) where they outlive the process, a restart or a power cut.
 *
 * On disk the area holds one artifact at most: `<sha256>.part` (the bytes, in order from the
 * first) and `<sha256>.json` (the expected sha256 and size, and the URL and validator —
 * ETag, Last-Modified — of the answer they came from). Opening it for an artifact removes
 * everything else there, so the area never holds more than one artifact's signed size.
 * The bytes are fsynced every {@link SYNC_EVERY_BYTES}, and whenever a GET ends; what a power
 * cut loses is fetched again, and anything a file system left wrong is caught by the sha256
 * over the whole artifact, which the download checks before it is used.
 */
import { mkdir, open, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { BodySink, Validator } from "./download-attempt.js";
import { writeFileDurably } from "./durable-state.js";

/** Bytes written between two fsyncs of a partial file. */
export const SYNC_EVERY_BYTES = 4 * 1024 * 1024;

/** Where the kept bytes came from. */
export interface PartialSource {
  readonly url: string;
  readonly validator: Validator;
}

/** The kept bytes of one artifact; see the file's TSDoc. */
export interface PartialDownload {
  /** Bytes kept: the offset of the next byte wanted. */
  readonly length: number;
  /** The answer the last kept bytes came from; undefined when none is kept. */
  readonly source: PartialSource | undefined;
  /**
   * Answers the kept bytes were assembled from (one kept from before this download counts as
   * one): above 1, a wrong sha256 may be a bad piece, and starting over may mend it.
   */
  readonly pieces: number;
  /** A sink for the answer to a GET of `url`: a 200 starts the bytes over, a 206 appends. */
  sink(url: string): BodySink;
  /** Makes the kept bytes durable. */
  sync(): Promise<void>;
  /** Every kept byte, in order. */
  read(): Promise<Uint8Array>;
  /** Drops the kept bytes (the next GET starts from 0). */
  reset(): Promise<void>;
  /** Ends this use, keeping the bytes for the next download of the artifact. */
  close(): Promise<void>;
  /** Ends this use and removes the bytes. */
  discard(): Promise<void>;
}

/** Kept bytes in memory, for one download: a cut resumes, a restart starts over. */
export function memoryPartial(): PartialDownload {
  let chunks: Uint8Array[] = [];
  let length = 0;
  let pieces = 0;
  let source: PartialSource | undefined;
  const reset = async () => {
    chunks = [];
    length = 0;
    pieces = 0;
    source = undefined;
  };
  return {
    get length() {
      return length;
    },
    get source() {
      return source;
    },
    get pieces() {
      return pieces;
    },
    sink: (url) => ({
      begin: async (start, validator) => {
        if (start === 0) await reset();
        else if (start !== length) throw new Error(`a body from ${start}, ${length} bytes kept`);
        pieces += 1;
        source = { url, validator };
      },
      write: async (chunk) => {
        chunks.push(chunk);
        length += chunk.byteLength;
      },
    }),
    sync: async () => {},
    read: async () => Buffer.concat(chunks, length),
    reset,
    close: async () => {},
    discard: reset,
  };
}

/** What a partial file's record says (`<sha256>.json`). */
interface PartialRecord {
  readonly sha256: string;
  readonly size: number;
  readonly url: string;
  readonly validator: Validator;
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Opens the download area `dir` (made, mode 0700, when missing) for the artifact `sha256` of
 * `size` bytes: the bytes kept by an earlier download of it when their record names this
 * sha256 and size and they are not longer than it, else none; anything else in the area is
 * removed.
 */
export async function openPartialFile(
  dir: string,
  sha256: string,
  size: number,
): Promise<PartialDownload> {
  if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${JSON.stringify(sha256)}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const data = join(dir, `${sha256}.part`);
  const recordFile = join(dir, `${sha256}.json`);
  for (const name of await readdir(dir)) {
    if (name !== `${sha256}.part` && name !== `${sha256}.json`) {
      await rm(join(dir, name), { recursive: true, force: true });
    }
  }
  const record = await readRecord(recordFile);
  let length = 0;
  let source: PartialSource | undefined;
  if (record !== undefined && record.sha256 === sha256 && record.size === size) {
    length = await stat(data).then(
      (s) => s.size,
      () => 0,
    );
    source = { url: record.url, validator: record.validator };
  }
  const handle = await open(data, "a", 0o600);
  if (length > size || source === undefined) {
    await handle.truncate(0);
    length = 0;
    source = undefined;
  }
  let pieces = length > 0 ? 1 : 0;
  let unsynced = 0;
  let closed = false;
  const sync = async () => {
    if (unsynced === 0 || closed) return;
    await handle.datasync();
    unsynced = 0;
  };
  const reset = async () => {
    await handle.truncate(0);
    await handle.datasync();
    unsynced = 0;
    length = 0;
    pieces = 0;
    source = undefined;
  };
  const close = async () => {
    if (closed) return;
    await sync();
    closed = true;
    await handle.close();
  };
  return {
    get length() {
      return length;
    },
    get source() {
      return source;
    },
    get pieces() {
      return pieces;
    },
    sink: (url) => ({
      begin: async (start, validator) => {
        if (start === 0) await reset();
        else if (start !== length) throw new Error(`a body from ${start}, ${length} bytes kept`);
        pieces += 1;
        source = { url, validator };
        const next: PartialRecord = { sha256, size, url, validator };
        await writeFileDurably(recordFile, `${JSON.stringify(next)}\n`);
      },
      write: async (chunk) => {
        for (let done = 0; done < chunk.byteLength; ) {
          done += (await handle.write(chunk, done)).bytesWritten;
        }
        length += chunk.byteLength;
        unsynced += chunk.byteLength;
        if (unsynced >= SYNC_EVERY_BYTES) await sync();
      },
    }),
    sync,
    read: async () => {
      await sync();
      return readFile(data);
    },
    reset,
    close,
    discard: async () => {
      await close();
      await rm(data, { force: true });
      await rm(recordFile, { force: true });
    },
  };
}

/** The record in `file`, or undefined when there is none or it is not one. */
async function readRecord(file: string): Promise<PartialRecord | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { sha256, size, url, validator } = value as Record<string, unknown>;
  if (typeof sha256 !== "string" || typeof size !== "number" || typeof url !== "string") {
    return undefined;
  }
  const v = (typeof validator === "object" && validator !== null ? validator : {}) as Record<
    string,
    unknown
  >;
  return {
    sha256,
    size,
    url,
    validator: {
      ...(typeof v.etag === "string" ? { etag: v.etag } : {}),
      ...(typeof v.lastModified === "string" ? { lastModified: v.lastModified } : {}),
    },
  };
}
