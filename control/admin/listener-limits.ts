/**
 * Limits of the admin listener's connections, so that slow, idle or numerous clients cannot
 * hold its sockets or memory: a cap on open connections, a deadline for a request's headers
 * and for the whole request (HTTP/1.1), an idle timeout between requests (HTTP/1.1
 * keep-alive) and for HTTP/2 sessions with no open stream, and a deadline for the first
 * bytes and the first stream of a connection.
 */
import type { Server as HttpServer } from "node:http";
import {
  constants,
  type Http2SecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2Session,
} from "node:http2";
import type { Server as NetServer, Socket } from "node:net";

/** The connection limits of the admin listener. */
export interface ListenerLimits {
  /** Connections open at once; more are closed as soon as they are accepted. */
  readonly maxConnections: number;
  /**
   * Connections one remote address holds at once on the TCP port (address-connections.ts);
   * undefined: no bound of its own.
   */
  readonly connectionsPerAddress?: number;
  /** A request's headers (and a new connection's first bytes or first stream) must arrive within this. */
  readonly headersTimeoutMs: number;
  /** A whole HTTP/1.1 request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** An HTTP/1.1 connection idle between requests is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** An HTTP/2 session with no open stream and no traffic is closed after this. */
  readonly idleTimeoutMs: number;
}

/** Concurrent streams one HTTP/2 session may open (what gRPC servers commonly allow). */
export const MAX_CONCURRENT_STREAMS = 100;

/** The HTTP/1.1 timeouts Node.js applies, as properties of the server that parses HTTP/1.1. */
interface Http1Timeouts {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
}

/**
 * Sets the HTTP/1.1 timeouts on `server` (an http.Server, or the HTTP/2 secure server that
 * also speaks HTTP/1.1). Node.js checks them every `connectionsCheckingInterval`, set here
 * to a fraction of the headers timeout; it reads that interval when the server starts
 * listening, so call this before `listen`.
 */
export function limitHttp1(server: HttpServer | Http2SecureServer, limits: ListenerLimits): void {
  const target = server as unknown as Http1Timeouts;
  target.headersTimeout = limits.headersTimeoutMs;
  target.requestTimeout = limits.requestTimeoutMs;
  target.keepAliveTimeout = limits.keepAliveTimeoutMs;
  target.connectionsCheckingInterval = Math.max(50, Math.min(1000, limits.headersTimeoutMs / 4));
}

/**
 * For an http.Server that never listens itself but is handed connections (the cleartext
 * admin port sniffs each connection, then passes it on): Node.js tracks connections and
 * enforces `headersTimeout` and `requestTimeout` only from the server's `listening` event,
 * so this emits it. Returns a function that stops the tracking.
 */
export function trackHandedConnections(server: HttpServer): () => void {
  server.emit("listening");
  return () => server.close();
}

/**
 * Closes HTTP/2 sessions that idle (no open stream and no traffic for `idleTimeoutMs`) and
 * sessions that open no stream within `headersTimeoutMs` of connecting; caps each session at
 * {@link MAX_CONCURRENT_STREAMS} streams. A session with an open stream (a quiet
 * `WatchCampaign`, say) is never closed for idling.
 */
export function limitHttp2(server: Http2Server | Http2SecureServer, limits: ListenerLimits): void {
  server.updateSettings({ maxConcurrentStreams: MAX_CONCURRENT_STREAMS });
  const open = new WeakMap<Http2Session, number>();
  server.on("session", (session: Http2Session) => {
    open.set(session, 0);
    const firstStream = setTimeout(() => session.destroy(), limits.headersTimeoutMs);
    firstStream.unref();
    session.once("stream", () => clearTimeout(firstStream));
    session.once("close", () => clearTimeout(firstStream));
    session.on("stream", (stream) => {
      open.set(session, (open.get(session) ?? 0) + 1);
      stream.once("close", () => open.set(session, (open.get(session) ?? 1) - 1));
    });
  });
  server.setTimeout(limits.idleTimeoutMs);
  // The secure server also reports idle HTTP/1.1 sockets here (keep-alive handles those).
  server.on("timeout", (session: Http2Session | Socket) => {
    if (!isSession(session) || (open.get(session) ?? 0) > 0) return;
    session.close();
    // A peer that does not finish the GOAWAY exchange is cut off.
    setTimeout(() => session.destroy(), 1000).unref();
  });
}

function isSession(value: Http2Session | Socket): value is Http2Session {
  return typeof (value as Partial<Http2Session>).goaway === "function";
}

/**
 * Caps the connections of `server` (the listening socket server) and counts those refused.
 * Node.js closes a connection over the cap as soon as it is accepted.
 */
export function capConnections(server: NetServer, limits: ListenerLimits, onRefused: () => void) {
  server.maxConnections = limits.maxConnections;
  server.on("drop", onRefused);
}

/** Destroys `socket` unless its first bytes arrive within `timeoutMs`. */
export function awaitFirstBytes(socket: Socket, timeoutMs: number): void {
  const onTimeout = () => socket.destroy();
  socket.setTimeout(timeoutMs, onTimeout);
  socket.once("data", () => {
    socket.setTimeout(0);
    socket.off("timeout", onTimeout);
  });
}

/**
 * Once the answer to an HTTP/2 request has gone out while its body had not all arrived (the
 * request was refused before reading it), closes the stream with RST_STREAM NO_ERROR, which
 * tells the client to stop sending (RFC 9113 §8.1) instead of leaving the stream open and
 * its unread bytes buffered. Waits until the answer's last frame was sent, so the client
 * reads the answer before the reset.
 */
export function closeUnreadStream(req: Http2ServerRequest): void {
  const stream = req.stream;
  // The stream's own "finish" (the answer is written); the compat response's comes on close.
  stream.once("finish", () => {
    if (req.complete) return;
    const deadline = Date.now() + 5000;
    const close = () => {
      if (stream.closed || stream.destroyed) return;
      if (stream.state.localClose || Date.now() > deadline) {
        stream.close(constants.NGHTTP2_NO_ERROR);
        return;
      }
      setTimeout(close, 10).unref();
    };
    close();
  });
}

/** How long a connection closed under an unread request body waits before it is reset. */
export const LINGER_MS = 1000;

/**
 * A lingering close for HTTP/1.1: when Node.js closes `socket` after an answer while the
 * request's body is still arriving (`unread()`), closing at once resets the connection with
 * the client's bytes unread, and the client's next write then fails before it has read the
 * answer. Instead the answer is followed by FIN, reading stops (nothing more of the body is
 * read; TCP flow control holds the client back), and the socket is destroyed `LINGER_MS`
 * later. Other closes are Node.js's own. Node.js closes a connection through `destroySoon`;
 * should it stop doing so, the close is simply immediate again.
 */
export function lingerOnUnreadClose(socket: Socket, unread: () => boolean): void {
  const closing = socket as Socket & { destroySoon?: () => void };
  const original = closing.destroySoon;
  if (typeof original !== "function") return;
  closing.destroySoon = () => {
    if (!unread()) {
      original.call(socket);
      return;
    }
    socket.end();
    // Node.js's HTTP server resumes the socket to discard the unread body, and its parser
    // reads the handle directly (pause() does not stop that): stop the handle itself, and
    // let nothing resume a connection being torn down.
    socket.pause();
    socket.resume = () => socket;
    (socket as Socket & { _handle?: { readStop?: () => number } })._handle?.readStop?.();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  };
}
