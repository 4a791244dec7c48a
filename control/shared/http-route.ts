/**
 * A plain HTTP route served next to the admin API (artifact downloads). The admin server
 * (control/admin/server.ts) runs the routes it is given; the features that offer one
 * (control/releases/downloads.ts) build it without knowing the server.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** A plain HTTP route served next to the API; returns false to pass the request on. */
export type HttpRoute = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => boolean | Promise<boolean>;
