/**
 * The Connect transport agentctl calls the admin API with: Connect over HTTP/1.1 (TCP, or a
 * Unix socket through Node's `socketPath`), the request body written in pieces so a large one
 * (`release register`'s artifacts) can show its progress through {@link UploadWatch}.
 */

import type { RequestOptions } from "node:https";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { validateReadWriteMaxBytes } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { compressionBrotli, compressionGzip, createNodeHttpClient } from "@connectrpc/connect-node";
import { progressHttpClient } from "./upload-progress.js";

/** Who hears the bytes of the request body in flight: set around one call, then cleared. */
export interface UploadWatch {
  listener: ((sent: number) => void) | undefined;
}

/** What {@link adminTransport} connects with. */
export interface AdminTransportOptions {
  readonly baseUrl: string;
  readonly interceptors: Interceptor[];
  /** Passed to Node's `http(s).request`: a Unix `socketPath`, a private CA. */
  readonly nodeOptions?: Omit<RequestOptions, "signal">;
}

/**
 * A Connect transport over HTTP/1.1 with the defaults of `createConnectTransport` (binary
 * format, gzip and brotli accepted, nothing compressed on send, no size limit below protobuf's)
 * whose request bodies are written in 1 MiB pieces, each reported to `uploads.listener`.
 */
export function adminTransport(options: AdminTransportOptions, uploads: UploadWatch): Transport {
  const http = createNodeHttpClient({
    httpVersion: "1.1",
    ...(options.nodeOptions !== undefined ? { nodeOptions: options.nodeOptions } : {}),
  });
  return createTransport({
    baseUrl: options.baseUrl,
    httpClient: progressHttpClient(http, (sent) => uploads.listener?.(sent)),
    useBinaryFormat: true,
    interceptors: options.interceptors,
    sendCompression: null,
    acceptCompression: [compressionGzip, compressionBrotli],
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
}
