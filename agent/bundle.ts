/**
 * Builds the Agent as one self-contained ES module (`agent.mjs`) with esbuild: every
 * dependency bundled, the version and platform baked in, run by the node's own Node.js.
 * The same file is the supervisor (`run`) and the Agent (`serve`).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** What to build. */
export interface BundleOptions {
  readonly version: string;
  readonly platform: string;
}

/** The entry point bundled into the artifact. */
export const AGENT_ENTRY = join(dirname(fileURLToPath(import.meta.url)), "main.ts");

/** The bytes of the artifact for `options`. */
export async function bundleAgent(options: BundleOptions): Promise<Uint8Array> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [AGENT_ENTRY],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    minify: true,
    legalComments: "none",
    external: ["esbuild"],
    define: {
      AGENT_BUILD_VERSION: JSON.stringify(options.version),
      AGENT_BUILD_PLATFORM: JSON.stringify(options.platform),
    },
    banner: {
      // Bundled CommonJS dependencies (grpc-js) still call require().
      js: `import { createRequire as __agentRequire } from "node:module"; const require = __agentRequire(import.meta.url);`,
    },
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error("esbuild produced no output");
  return file.contents;
}
