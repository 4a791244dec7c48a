/**
 * `npm run agent:build -- --version V [--platform P] [--executable] --out FILE`: writes the
 * Agent artifact (one bundled ES module for hosts with Node.js, or with `--executable` a
 * single executable that needs none; version and platform baked in) and prints its size and
 * sha256, the values a release manifest carries, as one JSON line on stdout; each step of
 * the build is reported on stderr as it starts, and the last with the time it took. Exit 2
 * with one line for bad flags or an output path that cannot be written (checked first).
 */
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { sha256Hex } from "../control/shared/release/digest.js";
import { isSemver } from "../control/shared/release/semver.js";
import { outPathProblem } from "./build-out.js";
import { bundleAgent } from "./bundle.js";
import { hostPlatform } from "./cli-args.js";
import { writeSingleExecutable } from "./executable.js";

const USAGE = `Usage: npm run agent:build -- --version V [--platform P] [--executable] --out FILE

  --version V     the version built in (a semantic version)
  --platform P    the platform built in (default: this host's, such as linux-amd64)
  --executable    a single executable that needs no Node.js on the host (built from this
                  host's Node.js, so only for this host's platform); default: an ES module
                  (agent.mjs) that the host's Node.js runs
  --out FILE      where to write the artifact
`;

async function main(): Promise<number> {
  let values: {
    version?: string;
    platform?: string;
    out?: string;
    executable?: boolean;
    help?: boolean;
  };
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        version: { type: "string" },
        platform: { type: "string" },
        out: { type: "string" },
        executable: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return usage((error as Error).message.split("\n")[0] ?? "bad arguments");
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version === undefined || !isSemver(values.version)) {
    return usage(
      `--version must be a semantic version such as 1.4.0, got ${JSON.stringify(values.version ?? "")}`,
    );
  }
  if (values.out === undefined || values.out === "") return usage("--out FILE is required");
  const platform = values.platform ?? hostPlatform();
  if (!/^[a-z0-9]+-[a-z0-9_]+$/.test(platform)) {
    return usage(`--platform must look like linux-amd64, got ${JSON.stringify(platform)}`);
  }
  if (values.executable && platform !== hostPlatform()) {
    return usage(
      `--executable builds for this host's platform only (${hostPlatform()}), got --platform ${platform}`,
    );
  }
  const problem = await outPathProblem(values.out);
  if (problem !== undefined) {
    process.stderr.write(`agent:build: ${problem}\n`);
    return 2;
  }
  const started = Date.now();
  const kind = values.executable ? "single executable" : "ES module";
  progress(`bundling ${values.version} for ${platform} (${kind})…`);
  let bytes: Uint8Array;
  if (values.executable) {
    const script = await bundleAgent({ version: values.version, platform, format: "cjs" });
    progress(
      `making the single executable from this Node.js ${process.version} (about half a minute)…`,
    );
    await writeSingleExecutable(script, values.out);
    bytes = await readFile(values.out);
  } else {
    bytes = await bundleAgent({ version: values.version, platform });
    await writeFile(values.out, bytes, { mode: 0o644 });
  }
  progress(`wrote ${values.out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(
    `${JSON.stringify({ file: values.out, version: values.version, platform, kind: values.executable ? "executable" : "module", size: bytes.byteLength, sha256: sha256Hex(bytes) })}\n`,
  );
  return 0;
}

/** One line of progress on stderr (stdout carries the result alone). */
function progress(message: string): void {
  process.stderr.write(`agent:build: ${message}\n`);
}

function usage(message: string): number {
  process.stderr.write(`agent:build: ${message} (see --help)\n`);
  return 2;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `agent:build: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
