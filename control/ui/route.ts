/**
 * `/ui` on the admin port: the dashboard's page and its bundled script and stylesheet. The
 * route needs no token (the page holds none); every admin API call the page makes carries
 * the operator's token and is checked as any other call.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Logger } from "../log.js";
import type { HttpRoute } from "../shared/http-route.js";
import { type BundledAsset, type DashboardBundle, lazyBundle } from "./bundle.js";
import { dashboardPage, SECURITY_HEADERS } from "./page.js";

/** Where the dashboard lives on the admin port. */
export const DASHBOARD_PATH = "/ui";

/** Options of {@link dashboardRoute}. */
export interface DashboardRouteOptions {
  readonly log: Logger;
  /** The bundle, built on first use by default. */
  readonly bundle?: () => Promise<DashboardBundle>;
}

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

/**
 * The dashboard route: `GET`/`HEAD` of `/ui` (redirected to `/ui/`), `/ui/` (the page, never
 * cached) and `/ui/assets/<name>-<hash>.{js,css}` (cached for good: the name changes with the
 * content). Any other path under `/ui/` is 404, any other method 405. Paths outside `/ui`
 * pass on to the admin API.
 */
export function dashboardRoute(options: DashboardRouteOptions): HttpRoute {
  const bundle = options.bundle ?? lazyBundle();
  const log = options.log.child({ component: "dashboard" });
  return async (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path !== DASHBOARD_PATH && !path.startsWith(`${DASHBOARD_PATH}/`)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      plain(res, 405, "method not allowed\n", { allow: "GET, HEAD" });
      return true;
    }
    if (path === DASHBOARD_PATH) {
      plain(res, 308, "", { location: `${DASHBOARD_PATH}/` });
      return true;
    }
    let built: DashboardBundle;
    try {
      built = await bundle();
    } catch (error) {
      log.error({ err: error }, "dashboard bundle failed");
      plain(res, 500, "the dashboard could not be built; see Control's log\n");
      return true;
    }
    if (path === `${DASHBOARD_PATH}/`) {
      const body = Buffer.from(dashboardPage(built));
      send(req, res, body, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
      });
      return true;
    }
    const asset = [built.script, built.style].find(
      (a) => path === `${DASHBOARD_PATH}/assets/${a.name}`,
    );
    if (!asset) {
      plain(res, 404, "not found\n");
      return true;
    }
    serveAsset(req, res, asset);
    return true;
  };
}

function serveAsset(req: Request, res: Response, asset: BundledAsset): void {
  const headers = {
    "content-type": asset.contentType,
    "cache-control": "public, max-age=31536000, immutable",
    etag: asset.etag,
    vary: "accept-encoding",
  };
  if (req.headers["if-none-match"] === asset.etag) {
    res.writeHead(304, { ...SECURITY_HEADERS, ...headers });
    res.end();
    return;
  }
  const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  send(
    req,
    res,
    gzip ? asset.gzipped : asset.body,
    gzip ? { ...headers, "content-encoding": "gzip" } : headers,
  );
}

function send(req: Request, res: Response, body: Buffer, headers: Record<string, string>): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    ...headers,
    "content-length": String(body.length),
  });
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

function plain(
  res: Response,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(body);
}
