/**
 * The admin HTTP server: the Connect admin API (Connect, gRPC-Web and gRPC protocols) plus
 * `/healthz`, `/readyz`, `/metrics` and any extra routes (artifact downloads) on one port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from "node:http2";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ControlError, toConnectError } from "../errors.js";
import type { Logger } from "../log.js";
import type { HttpRoute } from "../shared/http-route.js";
import type { ListenAddress } from "../shared/listen-address.js";
import { nulTextPath } from "../shared/nul-text.js";
import type { AdminTlsConfig } from "../tls/config.js";
import { authInterceptor, peerKey, type TokenEntry } from "./auth.js";
import type { Metrics } from "./metrics.js";

/** Options of {@link startAdminServer}. */
export interface AdminServerOptions {
  readonly address: ListenAddress;
  readonly tokens: readonly TokenEntry[];
  readonly routes: (router: ConnectRouter) => void;
  readonly metrics: Metrics;
  /** True when Control can serve (database reachable, servers up). */
  readonly ready: () => Promise<boolean>;
  readonly extraRoutes?: readonly HttpRoute[];
  readonly log: Logger;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1 chosen by ALPN) with this certificate; clear text when unset. */
  readonly tls?: AdminTlsConfig | undefined;
}

/** A listening admin server. */
export interface AdminServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the admin server. */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const log = options.log.child({ component: "admin" });
  const api = connectNodeAdapter({
    routes: (router) => {
      options.routes(router);
      refuseUnparsableBinary(router);
    },
    interceptors: [
      authInterceptor(options.tokens),
      refuseNulText,
      (next) => async (req) => {
        try {
          return await next(req);
        } catch (error) {
          if (!(error instanceof ControlError) && !(error instanceof ConnectError)) {
            log.error({ err: error, method: req.method.name }, "admin call failed");
          }
          throw toConnectError(error);
        }
      },
    ],
    readMaxBytes: 512 * 1024 * 1024,
    contextValues: (req) => createContextValues().set(peerKey, req.socket.remoteAddress ?? ""),
  });
  const handler = async (req: AnyRequest, res: AnyResponse) => {
    try {
      const path = (req.url ?? "/").split("?")[0];
      if (path === "/healthz") return text(res, 200, "ok\n");
      if (path === "/readyz") {
        const ready = await options.ready();
        return text(res, ready ? 200 : 503, ready ? "ready\n" : "not ready\n");
      }
      if (path === "/metrics") {
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
        res.end(options.metrics.render());
        return;
      }
      for (const route of options.extraRoutes ?? []) {
        if (await route(req, res)) return;
      }
      api(req, res);
    } catch (error) {
      log.error({ err: error }, "admin request failed");
      if (!res.headersSent) text(res, 500, "internal error\n");
      else res.destroy();
    }
  };
  const sockets = new Set<Socket>();
  const http1 = createServer((req, res) => void handler(req, res));
  http1.keepAliveTimeout = 65_000;
  // With TLS, ALPN picks HTTP/2 (gRPC) or HTTP/1.1 (Connect, gRPC-Web, curl) per connection.
  const server = options.tls
    ? createSecureServer(
        { cert: options.tls.cert, key: options.tls.key, allowHTTP1: true, minVersion: "TLSv1.2" },
        (req, res) => void handler(req, res),
      ).on("secureConnection", (socket: Socket) => {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      })
    : sniffingServer(handler, http1, sockets);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.address.port, options.address.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.address.host.includes(":")
    ? `[${options.address.host}]`
    : options.address.host;
  const urlHost = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  return {
    port,
    url: `${options.tls ? "https" : "http"}://${urlHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        http1.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function sniffingServer(
  handler: (req: AnyRequest, res: AnyResponse) => Promise<void>,
  http1: ReturnType<typeof createServer>,
  sockets: Set<Socket>,
) {
  const http2 = createHttp2Server({}, (req, res) => void handler(req, res));
  // One port for HTTP/1.1 (Connect, gRPC-Web, curl) and cleartext HTTP/2 (gRPC): the
  // first bytes of a connection tell which; HTTP/2 with prior knowledge starts "PRI ".
  return createNetServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.once("data", (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first.subarray(0, 4).toString("latin1") === "PRI ") {
        // The HTTP/2 session drains what is buffered on the socket when it takes it over.
        http2.emit("connection", socket);
      } else {
        http1.emit("connection", socket);
        socket.resume();
      }
    });
  });
}

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

function text(res: AnyResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(body);
}

/**
 * connect-es reports a request whose protobuf binary does not decode as `internal` ("parse
 * binary: …": HTTP 500, grpc-status 13), though the client sent it; a JSON body that does
 * not decode is already `invalid_argument`. This relabels the binary case the same way
 * (HTTP 400, grpc-status 3) for the Connect and gRPC protocols, so a malformed request
 * never looks like a server fault. Found by test/fuzz/admin-decoders.test.ts.
 */
function refuseUnparsableBinary(router: ConnectRouter): void {
  router.handlers.forEach((handler, index) => {
    const relabelled = async (req: UniversalServerRequest) => relabel(await handler(req));
    router.handlers[index] = Object.assign(relabelled, handler);
  });
}

const PARSE_BINARY = "parse binary:";

async function relabel(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const { body, header, trailer } = res;
  if (res.status === 500 && body && header?.get("content-type") === "application/json") {
    const chunks: Uint8Array[] = [];
    for await (const chunk of body) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    let error: { code?: unknown; message?: unknown } = {};
    try {
      error = JSON.parse(bytes.toString("utf8")) as typeof error;
    } catch {
      // Not a Connect error body: pass it on unchanged.
    }
    if (error.code !== "internal" || !String(error.message).startsWith(PARSE_BINARY)) {
      return { ...res, body: once(bytes) };
    }
    const fixed = Buffer.from(JSON.stringify({ code: "invalid_argument", message: error.message }));
    header.set("content-length", String(fixed.length));
    return { ...res, status: 400, body: once(fixed) };
  }
  if (!body || !trailer) return res;
  const fixTrailer = () => {
    const message = trailer.get("grpc-message") ?? "";
    if (trailer.get("grpc-status") === "13" && message.startsWith("parse%20binary%3A")) {
      trailer.set("grpc-status", "3");
    }
  };
  fixTrailer();
  return {
    ...res,
    body: (async function* () {
      yield* body;
      fixTrailer();
    })(),
  };
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** Refuses a request with U+0000 in a string (no database column can hold it), naming the field. */
const refuseNulText: Interceptor = (next) => async (req) => {
  const nul = req.stream ? undefined : nulTextPath(req.message);
  if (nul) {
    throw new ConnectError(
      `${nul} must not contain a NUL character (U+0000)`,
      Code.InvalidArgument,
    );
  }
  return next(req);
};
