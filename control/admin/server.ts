/**
 * The admin HTTP server: the Connect admin API (Connect, gRPC-Web and gRPC protocols) plus
 * `/healthz`, `/readyz`, `/metrics`, the standard gRPC health and reflection services, and any
 * extra routes (artifact downloads) on one port.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from "node:http2";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createContextValues, type Interceptor } from "@connectrpc/connect";
import type { UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Clock } from "../clock.js";
import { ControlError, toConnectError } from "../errors.js";
import type { Logger } from "../log.js";
import type { ControlMetrics } from "../metrics/index.js";
import type { HttpRoute } from "../shared/http-route.js";
import type { ListenAddress } from "../shared/listen-address.js";
import { nulTextPath } from "../shared/nul-text.js";
import type { AdminTlsConfig } from "../tls/config.js";
import { boundConnectionsPerAddress } from "./address-connections.js";
import { listenAdminSocket, prepareAdminSocket } from "./admin-socket.js";
import { authInterceptor, peerKey, type TokenEntry } from "./auth.js";
import { errorFunnel } from "./error-funnel.js";
import { createStandardServices } from "./grpc-standard-services.js";
import {
  awaitFirstBytes,
  capConnections,
  closeUnreadStream,
  type ListenerLimits,
  limitHttp1,
  limitHttp2,
  lingerOnUnreadClose,
  trackHandedConnections,
} from "./listener-limits.js";
import { type BodyLimits, guardRequests, withBodyLimits } from "./request-guard.js";

/** Limits of the admin listener: its connections, and the request bodies it reads. */
export interface AdminLimits extends ListenerLimits, BodyLimits {}

/** Options of {@link startAdminServer}. */
export interface AdminServerOptions {
  readonly address: ListenAddress;
  readonly tokens: readonly TokenEntry[];
  readonly routes: (router: ConnectRouter) => void;
  readonly metrics: ControlMetrics;
  /** True when Control can serve (database reachable, servers up). */
  readonly ready: () => Promise<boolean>;
  readonly extraRoutes?: readonly HttpRoute[];
  readonly log: Logger;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1 chosen by ALPN) with this certificate; clear text when unset. */
  readonly tls?: AdminTlsConfig | undefined;
  readonly limits: AdminLimits;
  /** Told of each call refused as unauthenticated (audited, rate-limited: auth-failures.ts). */
  readonly onAuthFailure?: (failure: { method: string; peer: string; message: string }) => void;
  /**
   * Also serve, in clear text, on this Unix socket (`adminSocket`, admin-socket.ts): the same
   * handler, limits and tokens as the TCP listener.
   */
  readonly socket?: string | undefined;
  /** Control's clock: a token's expiry is judged at its time. */
  readonly clock: Clock;
}

/** A listening admin server. */
export interface AdminServer {
  readonly port: number;
  readonly url: string;
  /** The Unix socket it also serves on, when `socket` was given. */
  readonly socket: string | undefined;
  /** Control has begun to stop: gRPC health answers NOT_SERVING from now on (Watch at once). */
  drain(): void;
  close(): Promise<void>;
}

/** Starts the admin server. */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const log = options.log.child({ component: "admin" });
  const { limits, metrics } = options;
  const refusedRequests = metrics.counter(
    "agent_control_admin_requests_refused_total",
    "Admin requests refused before their body was read, by reason.",
    ["reason"],
  );
  const refusedConnections = metrics.counter(
    "agent_control_admin_connections_refused_total",
    "Admin connections closed on accept: limits.adminMaxConnections were open, or their address held limits.adminConnectionsPerAddress.",
  );
  const draining = new AbortController();
  let adminServices: readonly DescService[] = [];
  const api = connectNodeAdapter({
    routes: (router) => {
      options.routes(withBodyLimits(router, limits));
      adminServices = [...new Set(router.handlers.map((handler) => handler.service))];
      refuseUnparsableBinary(router);
      // Last, so it runs first: nothing reads a body the guard has not admitted.
      guardRequests(router, {
        tokens: options.tokens,
        clock: options.clock,
        limits,
        onRefused: (reason) => refusedRequests.inc({ reason }),
        ...(options.onAuthFailure ? { onAuthFailure: options.onAuthFailure } : {}),
      });
    },
    interceptors: [authInterceptor(options.tokens, options.clock), refuseNulText, errorFunnel(log)],
    // Each RPC gets its own, smaller limit from withBodyLimits; this is only the default.
    readMaxBytes: Math.max(limits.requestBytes, limits.releaseBytes),
    contextValues: (req) => createContextValues().set(peerKey, req.socket.remoteAddress ?? ""),
    fallback: (req, res) => {
      // A body sent to no RPC is not read: over HTTP/1.1 the connection closes after the 404.
      if (!req.complete && !("stream" in req)) res.setHeader("connection", "close");
      res.writeHead(404);
      res.end();
    },
  });
  const standard = createStandardServices({
    ready: options.ready,
    draining: draining.signal,
    adminServices: () => adminServices,
  });
  // The request each HTTP/1.1 connection is on, for its lingering close.
  const current = new WeakMap<Socket, IncomingMessage>();
  const linger = (socket: Socket) =>
    lingerOnUnreadClose(socket, () => current.get(socket)?.complete === false);
  const handler = async (req: AnyRequest, res: AnyResponse) => {
    if (!("stream" in req)) current.set(req.socket, req);
    try {
      const path = (req.url ?? "/").split("?")[0];
      if (path === "/healthz") return text(res, 200, "ok\n");
      if (path === "/readyz") {
        if (draining.signal.aborted) return text(res, 503, "draining\n");
        const ready = await options.ready();
        return text(res, ready ? 200 : 503, ready ? "ready\n" : "not ready\n");
      }
      if (path === "/metrics") {
        const body = await metrics.render();
        res.writeHead(200, { "content-type": metrics.contentType });
        res.end(body);
        return;
      }
      for (const route of options.extraRoutes ?? []) {
        if (await route(req, res)) return;
      }
      if ("stream" in req) closeUnreadStream(req);
      if (standard.owns(path ?? "")) standard.handler(req, res);
      else api(req, res);
    } catch (error) {
      log.error({ err: error }, "admin request failed");
      if (!res.headersSent) text(res, 500, "internal error\n");
      else res.destroy();
    }
  };
  const sockets = new Set<Socket>();
  const http1 = createServer((req, res) => void handler(req, res));
  limitHttp1(http1, limits);
  const untrack = trackHandedConnections(http1);
  // With TLS, ALPN picks HTTP/2 (gRPC) or HTTP/1.1 (Connect, gRPC-Web, curl) per connection.
  const server = options.tls
    ? secureServer(options.tls, handler, limits, sockets, linger)
    : sniffingServer(handler, http1, sockets, limits, linger);
  capConnections(server, limits, () => refusedConnections.inc());
  if (limits.connectionsPerAddress !== undefined) {
    boundConnectionsPerAddress(server, {
      perAddress: limits.connectionsPerAddress,
      clock: options.clock,
      log,
      refused: () => refusedConnections.inc(),
    });
  }
  metrics.gauge(
    "agent_control_admin_connections",
    "Admin connections open now.",
    () => sockets.size,
  );
  // The socket speaks clear text whatever the TCP port speaks: only Control's user reaches it.
  // It listens first, so once the TCP port answers (`/readyz`), the socket does too.
  const local = options.socket
    ? sniffingServer(handler, http1, sockets, limits, linger)
    : undefined;
  if (local && options.socket) {
    capConnections(local, limits, () => refusedConnections.inc());
    await prepareAdminSocket(options.socket);
    await listenAdminSocket(local, options.socket);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.address.port, options.address.host, () => resolve());
    });
  } catch (error) {
    if (local) await new Promise((resolve) => local.close(resolve));
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const host = options.address.host.includes(":")
    ? `[${options.address.host}]`
    : options.address.host;
  const urlHost = host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host;
  return {
    port,
    url: `${options.tls ? "https" : "http"}://${urlHost}:${port}`,
    socket: options.socket,
    drain: () => draining.abort(),
    close: () =>
      new Promise<void>((resolve) => {
        draining.abort();
        let open = local ? 2 : 1;
        const closed = () => {
          if (--open === 0) resolve();
        };
        server.close(closed);
        local?.close(closed);
        untrack();
        http1.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function secureServer(
  tls: AdminTlsConfig,
  handler: (req: AnyRequest, res: AnyResponse) => Promise<void>,
  limits: AdminLimits,
  sockets: Set<Socket>,
  linger: (socket: Socket) => void,
) {
  const server = createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      allowHTTP1: true,
      minVersion: "TLSv1.2",
      handshakeTimeout: limits.headersTimeoutMs,
    },
    (req, res) => void handler(req, res),
  );
  limitHttp1(server, limits);
  limitHttp2(server, limits);
  return server.on("secureConnection", (socket: TLSSocket) => {
    if (socket.alpnProtocol !== "h2") linger(socket);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  });
}

function sniffingServer(
  handler: (req: AnyRequest, res: AnyResponse) => Promise<void>,
  http1: ReturnType<typeof createServer>,
  sockets: Set<Socket>,
  limits: AdminLimits,
  linger: (socket: Socket) => void,
) {
  const http2 = createHttp2Server({}, (req, res) => void handler(req, res));
  limitHttp2(http2, limits);
  // One port for HTTP/1.1 (Connect, gRPC-Web, curl) and cleartext HTTP/2 (gRPC): the
  // first bytes of a connection tell which; HTTP/2 with prior knowledge starts "PRI ".
  return createNetServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    awaitFirstBytes(socket, limits.headersTimeoutMs);
    socket.once("data", (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first.subarray(0, 4).toString("latin1") === "PRI ") {
        // The HTTP/2 session drains what is buffered on the socket when it takes it over.
        http2.emit("connection", socket);
      } else {
        linger(socket);
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
    throw toConnectError(
      new ControlError("invalid_argument", `${nul} must not contain a NUL character (U+0000)`, {
        field: nul,
      }),
    );
  }
  return next(req);
};
