/**
 * Hostile HTTP clients for the admin listener tests: a POST that streams a large body and
 * keeps sending until the server stops it (HTTP/1.1, and gRPC over HTTP/2), recording when
 * the answer arrived, and raw sockets for slow and idle clients.
 */
import { request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { constants as h2, connect as http2Connect } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";

/** What a streaming POST saw. */
export interface PostOutcome {
  /** HTTP status, when an answer arrived. */
  readonly status: number | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  /** Body bytes written when the answer arrived (undefined: no answer). */
  readonly sentAtAnswer: number | undefined;
  /** Body bytes written in all, until the server stopped taking them or all were sent. */
  readonly sent: number;
  /** The socket error that ended the upload, if any (EPIPE, ECONNRESET). */
  readonly error: string | undefined;
}

/** Options of {@link streamPost}. */
export interface StreamPostOptions {
  readonly url: string;
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  /** Body bytes to send. */
  readonly bytes: number;
  /** Declare `content-length` (default) or send chunked. */
  readonly declare?: boolean;
  /** Stop sending once the answer arrived (a polite client) instead of sending on. */
  readonly stopOnAnswer?: boolean;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x41);

/** POSTs `bytes` of body over a fresh HTTP/1.1 connection, sending on regardless of any answer. */
export function streamPost(options: StreamPostOptions): Promise<PostOutcome> {
  const url = new URL(options.url);
  return new Promise((resolve) => {
    let sent = 0;
    let status: number | undefined;
    let headers: PostOutcome["headers"] = {};
    let sentAtAnswer: number | undefined;
    let error: string | undefined;
    const body: Buffer[] = [];
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: options.path,
      agent: false,
      headers: {
        "content-type": "application/json",
        ...(options.declare === false ? {} : { "content-length": String(options.bytes) }),
        ...options.headers,
      },
    });
    req.on("response", (res) => {
      status = res.statusCode;
      headers = res.headers;
      sentAtAnswer = sent;
      res.on("data", (chunk: Buffer) => body.push(chunk));
      res.on("error", () => {
        // The connection closing under a finished answer is expected here.
      });
    });
    req.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    req.on("close", () =>
      resolve({
        status,
        headers,
        body: Buffer.concat(body).toString("utf8"),
        sentAtAnswer,
        sent,
        error,
      }),
    );
    const pump = () => {
      while (sent < options.bytes) {
        if (req.destroyed || (options.stopOnAnswer && status !== undefined)) return;
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, options.bytes - sent));
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/** What a streaming gRPC call saw. */
export interface GrpcOutcome {
  readonly httpStatus: number | undefined;
  /** grpc-status from the trailers, or from the headers of a trailers-only answer. */
  readonly grpcStatus: string | undefined;
  readonly grpcMessage: string | undefined;
  readonly sentAtAnswer: number | undefined;
  readonly sent: number;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR). */
  readonly rstCode: number | undefined;
}

/**
 * Sends a gRPC request over cleartext HTTP/2 whose body is `bytes` long (a gRPC frame
 * header declaring it, then filler), writing on regardless of the answer.
 */
export function streamGrpc(options: {
  readonly url: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly bytes: number;
}): Promise<GrpcOutcome> {
  return new Promise((resolve) => {
    const session = http2Connect(options.url);
    session.on("error", () => {
      // Reported through the stream below.
    });
    let sent = 0;
    let httpStatus: number | undefined;
    let grpcStatus: string | undefined;
    let grpcMessage: string | undefined;
    let sentAtAnswer: number | undefined;
    const stream = session.request({
      ":method": "POST",
      ":path": options.path,
      "content-type": "application/grpc",
      te: "trailers",
      ...options.headers,
    });
    const take = (headers: Record<string, unknown>) => {
      if (headers["grpc-status"] !== undefined) {
        grpcStatus = String(headers["grpc-status"]);
        grpcMessage = decodeURIComponent(String(headers["grpc-message"] ?? ""));
      }
    };
    stream.on("response", (headers) => {
      httpStatus = Number(headers[":status"]);
      sentAtAnswer = sent;
      take(headers);
    });
    stream.on("trailers", (trailers) => take(trailers));
    stream.on("data", () => {
      // Error answers carry no messages.
    });
    stream.on("error", () => {
      // The reset is reported as rstCode.
    });
    stream.on("close", () => {
      const rstCode = stream.rstCode;
      session.close();
      session.destroy();
      resolve({ httpStatus, grpcStatus, grpcMessage, sentAtAnswer, sent, rstCode });
    });
    const frame = Buffer.alloc(5);
    frame.writeUInt32BE(Math.max(0, options.bytes - 5), 1);
    let first = true;
    const pump = () => {
      while (sent < options.bytes) {
        if (stream.destroyed || stream.closed) return;
        const chunk = first
          ? Buffer.concat([frame, CHUNK.subarray(5)])
          : CHUNK.subarray(0, Math.min(CHUNK.length, options.bytes - sent));
        first = false;
        sent += chunk.length;
        if (!stream.write(chunk)) {
          stream.once("drain", pump);
          return;
        }
      }
      stream.end();
    };
    pump();
  });
}

/** The NO_ERROR reset code: "stop sending, the answer is complete" (RFC 9113 §8.1). */
export const RST_NO_ERROR = h2.NGHTTP2_NO_ERROR;

/** Opens a raw TCP connection to `url`'s host and port. */
export function rawSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves once `socket` is closed by the other side (or errors), with what it received. */
export function closed(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", () => {
      // A reset counts as closed.
    });
    if (socket.destroyed) resolve("");
    socket.once("close", () => resolve(Buffer.concat(received).toString("latin1")));
  });
}
