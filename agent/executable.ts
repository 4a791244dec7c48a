/**
 * Builds the Agent as a single executable (Node.js single executable applications): the
 * CommonJS bundle is turned into a preparation blob by `node --experimental-sea-config`
 * and injected with postject into a copy of the Node.js binary that builds it. The result
 * needs no Node.js on the host; it runs only on the platform that built it.
 */
import { execFile } from "node:child_process";
import { chmod, copyFile, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BundleOptions, bundleAgent } from "./bundle.js";

const run = promisify(execFile);

/** The fuse Node.js looks for to know a blob was injected. */
export const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** The resource name Node.js reads the blob from. */
const SEA_RESOURCE = "NODE_SEA_BLOB";

/**
 * Writes to `out` (mode 0755) a copy of this process's Node.js binary that runs the
 * CommonJS `script` instead of its usual command line. The file appears whole or not at
 * all (it is written under a temporary name and renamed).
 */
export async function writeSingleExecutable(script: Uint8Array, out: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "agent-sea-"));
  try {
    const main = join(work, "main.cjs");
    const blob = join(work, "sea.blob");
    await writeFile(main, script);
    await writeFile(
      join(work, "sea-config.json"),
      JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true }),
    );
    await run(process.execPath, ["--experimental-sea-config", join(work, "sea-config.json")], {
      cwd: work,
    });
    const binary = join(work, "agent");
    await copyFile(process.execPath, binary);
    await chmod(binary, 0o755);
    // postject's command line, as a child: its ELF parser's warnings stay out of the build's
    // output (they are shown when the injection fails).
    const postject = createRequire(import.meta.url).resolve("postject/dist/cli.js");
    await run(process.execPath, [
      postject,
      binary,
      SEA_RESOURCE,
      blob,
      "--sentinel-fuse",
      SEA_FUSE,
      ...(process.platform === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : []),
    ]).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`postject failed: ${(error.stderr ?? "").trim() || error.message}`);
    });
    const temp = `${out}.${process.pid}.tmp`;
    await copyFile(binary, temp);
    await chmod(temp, 0o755);
    await rename(temp, out);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Builds the single executable Agent of `options` (format is always CommonJS) into `out`. */
export async function buildExecutable(
  options: Omit<BundleOptions, "format">,
  out: string,
): Promise<void> {
  await writeSingleExecutable(await bundleAgent({ ...options, format: "cjs" }), out);
}
