/**
 * A GET over https with TLS options of its own (a CA, a client certificate), answered as a
 * fetch `Response`, so a download reads it exactly as one made by the global `fetch` (whose
 * TLS cannot be set per request). Its errors look like fetch's: a `TypeError` "fetch failed"
 * whose `cause` is the socket's error (download-errors.ts reads that cause).
 */
import { request } from "node:https";
import { Readable } from "node:stream";
import { rootCertificates } from "node:tls";
import type { DownloadTls } from "./download-origins.js";

/** What {@link fetchWithTls} takes of a fetch `RequestInit`. */
export interface TlsFetchInit {
  readonly signal: AbortSignal;
  readonly headers?: Readonly<Record<string, string>>;
  /** `manual`: a redirect is the response; otherwise a redirect fails (never followed). */
  readonly redirect?: "manual" | "error";
}

/** Statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * GETs the https `url` with `tls`: its CA (beside the system's roots) verifies the server,
 * and its certificate and key, when given, are presented as the client's. Redirects are
 * never followed: with `redirect: "manual"` the 3xx is the response, else it fails as fetch
 * fails a redirect it must not follow. Nothing is kept alive between requests.
 */
export function fetchWithTls(url: string, tls: DownloadTls, init: TlsFetchInit): Promise<Response> {
  const failed = (cause: unknown) => new TypeError("fetch failed", { cause });
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      reject(failed(error));
      return;
    }
    if (target.protocol !== "https:") {
      reject(failed(new Error(`${target.protocol} is not https`)));
      return;
    }
    const req = request(
      target,
      {
        method: "GET",
        headers: { ...init.headers },
        agent: false,
        signal: init.signal,
        ...(tls.ca === undefined ? {} : { ca: [...rootCertificates, Buffer.from(tls.ca)] }),
        ...(tls.cert === undefined ? {} : { cert: Buffer.from(tls.cert) }),
        ...(tls.key === undefined ? {} : { key: Buffer.from(tls.key) }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const redirect = status >= 300 && status < 400 && res.headers.location !== undefined;
        if (status < 200 || status > 599 || (redirect && init.redirect !== "manual")) {
          res.destroy();
          reject(failed(new Error(redirect ? "unexpected redirect" : `HTTP status ${status}`)));
          return;
        }
        try {
          const headers = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
            headers.append(res.rawHeaders[i] ?? "", res.rawHeaders[i + 1] ?? "");
          }
          if (NULL_BODY.has(status)) res.resume();
          const body = NULL_BODY.has(status)
            ? null
            : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers }));
        } catch (error) {
          res.destroy();
          reject(failed(error));
        }
      },
    );
    req.on("error", (error) => reject(failed(error)));
    req.end();
  });
}
