/**
 * Serves artifact files Control holds: `GET /downloads/agent/{version}/{platform}`.
 *
 * Integrity comes from the signed manifest's sha256 and size, which every Agent checks, so
 * the route needs no credential. Files are cached in memory by sha256 (bounded), so a
 * fleet downloading one release reads each file from PostgreSQL once.
 */
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import type { HttpRoute } from "../shared/http-route.js";

const PATH = /^\/downloads\/agent\/([^/]+)\/([^/]+)$/;

/** The URL path of a served artifact. */
export function downloadPath(version: string, platform: string): string {
  return `/downloads/agent/${encodeURIComponent(version)}/${encodeURIComponent(platform)}`;
}

/** Builds the download route with a cache of at most `cacheBytes`. */
export function downloadsRoute(db: Database, cacheBytes = 512 * 1024 * 1024): HttpRoute {
  const cache = new Map<string, Buffer>();
  let cached = 0;
  const remember = (sha256: string, content: Buffer) => {
    if (content.byteLength > cacheBytes) return;
    while (cached + content.byteLength > cacheBytes && cache.size > 0) {
      const [oldest, bytes] = cache.entries().next().value as [string, Buffer];
      cache.delete(oldest);
      cached -= bytes.byteLength;
    }
    cache.set(sha256, content);
    cached += content.byteLength;
  };
  return async (req, res) => {
    const match = PATH.exec((req.url ?? "").split("?")[0] ?? "");
    if (!match) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" });
      res.end();
      return true;
    }
    const version = decodeURIComponent(match[1] ?? "");
    const platform = decodeURIComponent(match[2] ?? "");
    const release = await db.em().findOne(ReleaseEntity, { version });
    const artifact = release?.artifacts.find((a) => a.platform === platform && a.url === "");
    if (!artifact) {
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end(`no served artifact for ${version}/${platform}\n`);
      return true;
    }
    let content = cache.get(artifact.sha256);
    if (!content) {
      const result = await db.pool.query<{ content: Buffer }>(
        "select content from artifact_files where sha256 = $1",
        [artifact.sha256],
      );
      content = result.rows[0]?.content;
      if (!content) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("artifact file missing\n");
        return true;
      }
      remember(artifact.sha256, content);
    }
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": content.byteLength,
      etag: `"${artifact.sha256}"`,
    });
    if (req.method === "HEAD") res.end();
    else res.end(content);
    return true;
  };
}
