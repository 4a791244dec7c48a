/**
 * `npm run agent:build -- --version V [--platform P] [--executable] --out FILE`: writes the
 * Agent artifact (one bundled ES module for hosts with Node.js, or with `--executable` a
 * single executable that needs none; version and platform baked in) and prints its size and
 * sha256, the values a release manifest carries. Exit 2 with one line for bad flags.
 */
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { sha256Hex } from "../control/shared/release/digest.js";
import { isSemver } from "../control/shared/release/semver.js";
import { bundleAgent } from "./bundle.js";
import { hostPlatform } from "./cli-args.js";
import { buildExecutable } from "./executable.js";

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
  let bytes: Uint8Array;
  if (values.executable) {
    if (platform !== hostPlatform()) {
      return usage(
        `--executable builds for this host's platform only (${hostPlatform()}), got --platform ${platform}`,
      );
    }
    await buildExecutable({ version: values.version, platform }, values.out);
    bytes = await readFile(values.out);
  } else {
    bytes = await bundleAgent({ version: values.version, platform });
    await writeFile(values.out, bytes, { mode: 0o644 });
  }
  process.stdout.write(
    `${JSON.stringify({ file: values.out, version: values.version, platform, kind: values.executable ? "executable" : "module", size: bytes.byteLength, sha256: sha256Hex(bytes) })}\n`,
  );
  return 0;
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
