/**
 * `npm run agent:build -- --version V [--platform P] --out FILE`: writes the Agent artifact
 * (one bundled ES module, version and platform baked in) and prints its size and sha256, the
 * values a release manifest carries. Exit 2 with one line for bad flags.
 */
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { sha256Hex } from "../control/shared/release/digest.js";
import { isSemver } from "../control/shared/release/semver.js";
import { bundleAgent } from "./bundle.js";
import { hostPlatform } from "./cli-args.js";

const USAGE = "Usage: npm run agent:build -- --version V [--platform P] --out FILE\n";

async function main(): Promise<number> {
  let values: { version?: string; platform?: string; out?: string; help?: boolean };
  try {
    values = parseArgs({
      args: process.argv.slice(2),
      options: {
        version: { type: "string" },
        platform: { type: "string" },
        out: { type: "string" },
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
  const bytes = await bundleAgent({ version: values.version, platform });
  await writeFile(values.out, bytes, { mode: 0o644 });
  process.stdout.write(
    `${JSON.stringify({ file: values.out, version: values.version, platform, size: bytes.byteLength, sha256: sha256Hex(bytes) })}\n`,
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
