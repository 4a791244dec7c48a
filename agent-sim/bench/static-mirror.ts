/**
 * A plain HTTP mirror: a Node.js `http` server that serves fixed files by path, as object
 * storage, a CDN or nginx would serve a release's artifacts, with no credential of its own and
 * nothing of Control in it. It records what each request carried (path, whether it had an
 * `Authorization` header), so a test can tell that no node token reached it. GET and HEAD
 * only; any other path is 404. Used by the downloads benchmark and the mirror end-to-end test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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
  /** Serves `bytes` at `path` (replacing what was there). */
  put(path: string, bytes: Uint8Array): void;
  /** Stops accepting and closes every connection. */
  close(): Promise<void>;
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
  const served = new Map(files);
  const requests: MirrorRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    requests.push({
      method: req.method ?? "",
      path,
      authorized: req.headers.authorization !== undefined,
    });
    const body = served.get(path);
    if ((req.method !== "GET" && req.method !== "HEAD") || body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": String(body.byteLength),
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
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
      served.set(path, bytes);
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
