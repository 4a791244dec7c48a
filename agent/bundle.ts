/**
 * Builds the Agent as one self-contained script with esbuild: every dependency bundled, the
 * version and platform baked in. The same script is the supervisor (`run`) and the Agent
 * (`serve`). Two formats: an ES module (`agent.mjs`, run by the host's Node.js) and a
 * CommonJS script, the one script a single executable embeds (see `executable.ts`).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The two script formats: `esm` for `agent.mjs`, `cjs` for a single executable. */
export type BundleFormat = "esm" | "cjs";

/** What to build. */
export interface BundleOptions {
  readonly version: string;
  readonly platform: string;
  /** Default `esm`. */
  readonly format?: BundleFormat;
}

/** The entry point bundled into the artifact. */
export const AGENT_ENTRY = join(dirname(fileURLToPath(import.meta.url)), "main.ts");

/**
 * The CommonJS script has no `import.meta`: its `import.meta.url` becomes the file URL of
 * the running executable (in a single executable, `process.execPath` is the artifact).
 */
const CJS_BANNER = `var __agentImportMetaUrl = require("node:url").pathToFileURL(process.execPath).href;`;

/** Bundled CommonJS dependencies (grpc-js) still call require(). */
const ESM_BANNER = `import { createRequire as __agentRequire } from "node:module"; const require = __agentRequire(import.meta.url);`;

/** The bytes of the artifact script for `options`. */
export async function bundleAgent(options: BundleOptions): Promise<Uint8Array> {
  const esbuild = await import("esbuild");
  const cjs = options.format === "cjs";
  const result = await esbuild.build({
    entryPoints: [AGENT_ENTRY],
    bundle: true,
    platform: "node",
    format: cjs ? "cjs" : "esm",
    target: "node20",
    write: false,
    minify: true,
    legalComments: "none",
    external: ["esbuild"],
    define: {
      AGENT_BUILD_VERSION: JSON.stringify(options.version),
      AGENT_BUILD_PLATFORM: JSON.stringify(options.platform),
      ...(cjs ? { "import.meta.url": "__agentImportMetaUrl" } : {}),
    },
    banner: { js: cjs ? CJS_BANNER : ESM_BANNER },
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error("esbuild produced no output");
  return file.contents;
}
