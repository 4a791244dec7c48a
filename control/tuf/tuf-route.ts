/**
 * `GET /tuf/{role}.json` and `GET /tuf/{version}.root.json` beside the downloads: the
 * offline-signed root and targets metadata read from the repository directory (as
 * `agentctl tuf` wrote it), snapshot and timestamp signed here with Control's online keys
 * (see online-roles.ts), cached until targets.json or the timestamp window changes. The
 * metadata is public: no credential is asked for, none is needed.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "../clock.js";
import type { HttpRoute } from "../shared/http-route.js";
import { type OnlineRoleKeys, type OnlineRoles, signOnlineRoles } from "./online-roles.js";

/** Options of the route. */
export interface TufRouteOptions extends OnlineRoleKeys {
  /** The repository directory (root.json, N.root.json, targets.json). */
  readonly dir: string;
  readonly clock: Clock;
}

const NAME = /^\/tuf\/((?:[1-9]\d{0,9}\.root)|root|targets|snapshot|timestamp)\.json$/;

/** The route, and a way to read the online roles it serves now. */
export function tufRoute(options: TufRouteOptions): {
  route: HttpRoute;
  online(): Promise<OnlineRoles>;
  /**
   * Seconds until the offline-signed metadata (root.json or targets.json, whichever first)
   * expires, negative once it has: past it every Agent refuses new releases (a freeze)
   * until root or targets are signed again. NaN when the files cannot be read.
   */
  offlineExpirySeconds(): number;
} {
  let cached: { key: string; roles: OnlineRoles } | undefined;
  const online = async (): Promise<OnlineRoles> => {
    const targets = await readFile(join(options.dir, "targets.json"));
    const window = Math.floor(options.clock.now().getTime() / options.windowMs);
    const key = `${window}|${targets.toString("base64")}`;
    if (cached?.key !== key) {
      cached = { key, roles: await signOnlineRoles(targets, options.clock.now(), options) };
    }
    return cached.roles;
  };
  const route: HttpRoute = async (req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (!path.startsWith("/tuf/")) return false;
    const match = NAME.exec(path);
    if ((req.method !== "GET" && req.method !== "HEAD") || match === null) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return true;
    }
    const name = match[1] ?? "";
    let body: Buffer;
    try {
      if (name === "snapshot") body = (await online()).snapshot;
      else if (name === "timestamp") body = (await online()).timestamp;
      else body = await readFile(join(options.dir, `${name}.json`));
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found\n");
      return true;
    }
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": body.byteLength,
      "cache-control": "no-store",
    });
    if (req.method === "HEAD") res.end();
    else res.end(body);
    return true;
  };
  const offlineExpirySeconds = (): number => {
    try {
      const expiries = ["root.json", "targets.json"].map((name) => {
        const doc = JSON.parse(readFileSync(join(options.dir, name), "utf8")) as {
          signed?: { expires?: string };
        };
        return Date.parse(doc.signed?.expires ?? "");
      });
      return (Math.min(...expiries) - options.clock.now().getTime()) / 1000;
    } catch {
      return Number.NaN;
    }
  };
  return { route, online, offlineExpirySeconds };
}
