/**
 * A plain HTTP mirror: a Node.js `http` server that serves fixed files by path, as object
 * storage, a CDN or nginx would serve a release's artifacts, with no credential of its own and
 * nothing of Control in it. It records what each request carried (path, whether it had an
 * `Authorization` header), so a test can tell that no node token reached it. GET and HEAD
 * only; any other path is 404. Ranges as a static server answers them (control's
 * `decideRange`: one byte range 206 with `Content-Range`, 416 past the end, several ranges or
 * bad syntax the whole file), with an ETag and a Last-Modified per stored file, both new each
 * time a path is `put`, so `If-Range` with an older one gets the whole file. Used by the
 * downloads benchmark, the resume benchmark and the mirror end-to-end test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decideRange } from "../../control/releases/byte-range.js";

/** One request the mirror answered. */
export interface MirrorRequest {
  readonly method: string;
  readonly path: string;
  /** True when the request carried an `Authorization` header (a credential). */
  readonly authorized: boolean;
}

/** A running mirror. */
export interface StaticMirror {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly MirrorRequest[];
  /** Serves `bytes` at `path` (replacing what was there, with a new ETag and Last-Modified). */
  put(path: string, bytes: Uint8Array): void;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
}

/** A served file with its validators. */
interface StoredFile {
  readonly bytes: Uint8Array;
  readonly etag: string;
  readonly lastModified: string;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Starts a mirror on 127.0.0.1 (port 0 unless given) serving `files` (path → bytes). Bodies
 * are written in 1 MiB slices, each after the client drained the one before, as a static
 * server streams a file.
 */
export async function startStaticMirror(
  files: ReadonlyMap<string, Uint8Array> = new Map(),
  port = 0,
): Promise<StaticMirror> {
  const served = new Map<string, StoredFile>();
  let generation = 0;
  const store = (path: string, bytes: Uint8Array) => {
    generation += 1;
    served.set(path, {
      bytes,
      etag: `"${generation.toString(16)}-${bytes.byteLength.toString(16)}"`,
      lastModified: new Date().toUTCString(),
    });
  };
  for (const [path, bytes] of files) store(path, bytes);
  const requests: MirrorRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    requests.push({
      method: req.method ?? "",
      path,
      authorized: req.headers.authorization !== undefined,
    });
    const file = served.get(path);
    if ((req.method !== "GET" && req.method !== "HEAD") || file === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const size = file.bytes.byteLength;
    const ifRange = header(req, "if-range");
    // A date in If-Range matches when it is exactly the file's Last-Modified.
    const validator = ifRange === file.lastModified ? file.etag : ifRange;
    const range = decideRange(header(req, "range"), size, file.etag, validator);
    const common = {
      "accept-ranges": "bytes",
      etag: file.etag,
      "last-modified": file.lastModified,
    };
    if (range.kind === "unsatisfiable") {
      res.writeHead(416, { ...common, "content-range": `bytes */${size}` }).end();
      return;
    }
    const [start, end] = range.kind === "partial" ? [range.start, range.end] : [0, size - 1];
    res.writeHead(range.kind === "partial" ? 206 : 200, {
      ...common,
      "content-type": "application/octet-stream",
      "content-length": String(end - start + 1),
      ...(range.kind === "partial" ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    const body = file.bytes.subarray(start, end + 1);
    const SLICE = 1024 * 1024;
    let offset = 0;
    const pump = () => {
      while (offset < body.byteLength) {
        const end = Math.min(offset + SLICE, body.byteLength);
        const ok = res.write(body.subarray(offset, end));
        offset = end;
        if (!ok) {
          res.once("drain", pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    requests,
    put(path, bytes) {
      store(path, bytes);
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
