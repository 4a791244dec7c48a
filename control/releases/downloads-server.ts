/**
 * The downloads listener (`downloads.addr`): artifact downloads on a port of their own, so
 * the fleet needs to reach only this port and the agent port, never the admin API. HTTP/1.1,
 * over TLS when `tls.downloads` is set (with a client CA, clients are asked for a
 * certificate that then names the node). Serves the download route and `/healthz`; every
 * other path is 404. Tight timeouts for what a download client sends (headers, TLS
 * handshake), since the port faces the whole fleet.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log.js";
import type { HttpRoute } from "../shared/http-route.js";
import type { ListenAddress } from "../shared/listen-address.js";
import type { DownloadsTlsConfig } from "../tls/config.js";

/** Options of {@link startDownloadsServer}. */
export interface DownloadsServerOptions {
  readonly address: ListenAddress;
  readonly route: HttpRoute;
  readonly log: Logger;
  /** HTTPS with this certificate (and client CA); clear text when undefined. */
  readonly tls?: DownloadsTlsConfig | undefined;
  /** A connection idle this long (nothing read or written) is closed. */
  readonly idleMs: number;
  /**
   * Connections held at once (`downloads.maxConnections`); the next is closed as soon as it is
   * accepted, so a flood of silent connections cannot use up Control's file descriptors.
   */
  readonly maxConnections: number;
}

/** A listening downloads server. */
export interface DownloadsServer {
  readonly port: number;
  /** `http(s)://host:port`, the default base URL agents download from. */
  readonly url: string;
  /** Stops listening and cuts downloads in progress. */
  close(): Promise<void>;
}

/** Starts the downloads listener. */
export async function startDownloadsServer(
  options: DownloadsServerOptions,
): Promise<DownloadsServer> {
  const log = options.log.child({ component: "downloads" });
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        if ((req.url ?? "/").split("?")[0] === "/healthz") {
          res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
          return;
        }
        if (await options.route(req, res)) return;
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      } catch (error) {
        log.error({ err: error }, "download request failed");
        if (!res.headersSent)
          res.writeHead(500, { "content-type": "text/plain" }).end("internal error\n");
        else res.destroy();
      }
    })();
  };
  const tls = options.tls;
  const server = tls
    ? createHttpsServer(
        {
          cert: tls.cert,
          key: tls.key,
          minVersion: "TLSv1.2",
          handshakeTimeout: 10_000,
          // Ask for a certificate, never refuse a peer without one: a bearer node token
          // authenticates as well, and the route decides (401) when neither is there.
          ...(tls.clientCa !== undefined
            ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false }
            : {}),
        },
        handler,
      )
    : createHttpServer(handler);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.setTimeout(options.idleMs); // no 'timeout' listener: an idle socket is destroyed
  server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.address.port, options.address.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.address.host;
  const urlHost =
    host === "0.0.0.0"
      ? "127.0.0.1"
      : host === "::"
        ? "[::1]"
        : host.includes(":")
          ? `[${host}]`
          : host;
  return {
    port,
    url: `${tls ? "https" : "http"}://${urlHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
