/**
 * The dashboard's browser code, bundled by esbuild in memory from `ui/` the first time it is
 * asked for, then kept for the life of the process: users run no build step of their own.
 */
import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { packageRoot } from "../shared/package-root.js";

/** One bundled file, served under a name that changes with its content. */
export interface BundledAsset {
  /** `main-<hash>.js` or `app-<hash>.css`. */
  readonly name: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** The same body, gzip-compressed, for clients that accept it. */
  readonly gzipped: Buffer;
  /** A strong ETag of the body. */
  readonly etag: string;
}

/** The dashboard's script and stylesheet. */
export interface DashboardBundle {
  readonly script: BundledAsset;
  readonly style: BundledAsset;
}

/**
 * The repository's `ui/` folder, where the dashboard's sources live: beside Control's
 * `package.json`, whether this module runs from its source or from `dist/control.mjs`.
 */
export const UI_SOURCE_DIR = join(
  packageRoot(import.meta.url) ?? resolve(dirname(fileURLToPath(import.meta.url)), "../.."),
  "ui",
);

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/**
 * Bundles `ui/main.ts` (with everything it imports: Preact, htm, connect-web, the generated
 * admin API) and `ui/app.css`, minified, in memory.
 * @throws Error naming the first esbuild error when the sources do not build
 */
export async function bundleDashboard(sourceDir: string = UI_SOURCE_DIR): Promise<DashboardBundle> {
  const result = await build({
    entryPoints: [join(sourceDir, "main.ts"), join(sourceDir, "app.css")],
    absWorkingDir: sourceDir,
    outdir: "/dashboard",
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const assets = result.outputFiles.map((file): BundledAsset => {
    const ext = file.path.endsWith(".css") ? ".css" : ".js";
    const body = Buffer.from(file.contents);
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    const base = file.path.slice("/dashboard/".length, -ext.length);
    return {
      name: `${base}-${hash}${ext}`,
      contentType: CONTENT_TYPES[ext] ?? "application/octet-stream",
      body,
      gzipped: gzipSync(body, { level: 9 }),
      etag: `"${hash}"`,
    };
  });
  const script = assets.find((a) => a.name.endsWith(".js"));
  const style = assets.find((a) => a.name.endsWith(".css"));
  if (!script || !style) throw new Error("the dashboard bundle lacks its script or stylesheet");
  return { script, style };
}

/**
 * A bundle built once, on first use: concurrent first requests share one build, and a
 * failed build is tried again on the next request instead of being remembered.
 */
export function lazyBundle(
  make: () => Promise<DashboardBundle> = bundleDashboard,
): () => Promise<DashboardBundle> {
  let pending: Promise<DashboardBundle> | undefined;
  return () => {
    pending ??= make().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
