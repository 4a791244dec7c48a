/**
 * A plain HTTP server on 127.0.0.1 and a free port, for tests that serve files or play a
 * hostile server: `close()` ends every open connection too, so no test waits on a keep-alive.
 */
import { createServer, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A listening loopback server. */
export interface LoopbackHttp {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly origin: string;
  /** Closes the server and every connection to it; idempotent. */
  close(): Promise<void>;
}

/** Starts `handler` on 127.0.0.1, port 0. */
export async function startLoopbackHttp(handler: RequestListener): Promise<LoopbackHttp> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed: Promise<void> | undefined;
  return {
    origin,
    close() {
      server.closeAllConnections();
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      return closed;
    },
  };
}

/**
 * Answers `name` from `files`: 200 with the bytes, or 404 when absent (a static file server).
 */
export function serveFile(
  files: ReadonlyMap<string, Buffer>,
  name: string,
  res: ServerResponse,
): void {
  const body = files.get(name);
  if (body === undefined) res.writeHead(404).end();
  else res.writeHead(200, { "content-length": body.byteLength }).end(body);
}
