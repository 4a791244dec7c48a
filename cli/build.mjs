// Bundles agentctl ahead of time into cli/dist/, a self-contained package that needs no
// node_modules: agentctl.mjs (the entry: argument parsing, help) and chunks/ (the admin API
// clients, YAML, release signing, loaded only by the commands that use them), plus a
// package.json and README.md, so `npm pack ./cli/dist` makes an installable tarball.
// Run by the root package's `prepare` (so `npm ci` builds it) and by `npm run build:cli`.
// Usage: node cli/build.mjs [--out DIR] [--quiet]   (default DIR: cli/dist)
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const cli = dirname(fileURLToPath(import.meta.url));
const root = dirname(cli);
const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** Builds the package into `out` (emptied first) and resolves to the bundle's entry path. */
export async function buildAgentctl(out = join(cli, "dist")) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { agentctl: join(cli, "main.ts") },
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    minify: !process.env.AGENTCTL_BUILD_DEBUG,
    legalComments: "eof",
    define: { __AGENTCTL_VERSION__: JSON.stringify(rootPackage.version) },
    banner: {
      // Dependencies published as CommonJS call require(); give every chunk one.
      js: '#!/usr/bin/env node\nimport { createRequire as __agentctlRequire } from "node:module";\nconst require = __agentctlRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  writeFileSync(
    join(out, "package.json"),
    `${JSON.stringify(
      {
        name: "agentctl",
        version: rootPackage.version,
        description: "agentctl: the administrator's CLI of Agent Control (self-contained bundle)",
        license: rootPackage.license ?? "UNLICENSED",
        type: "module",
        engines: rootPackage.engines,
        bin: { agentctl: "agentctl.mjs" },
        files: ["agentctl.mjs", "chunks", "README.md"],
      },
      null,
      2,
    )}\n`,
  );
  copyFileSync(join(cli, "README.md"), join(out, "README.md"));
  chmodSync(join(out, "agentctl.mjs"), 0o755);
  return join(out, "agentctl.mjs");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf("--out");
  const entry = await buildAgentctl(
    at > 0 && process.argv[at + 1] ? process.argv[at + 1] : undefined,
  );
  if (!process.argv.includes("--quiet")) console.log(`built ${entry}`);
}
