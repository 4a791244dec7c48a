/**
 * The signed release the campaign scenarios push: an ed25519 key made with the real
 * `agentctl release keygen`, a manifest over a small artifact, signed offline, then
 * registered with the running Control (which pins the key).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentctl } from "../demo/agentctl.js";

/** A release ready to register. */
export interface BenchRelease {
  readonly version: string;
  /** The key's public pin (`ed25519:…`) for Control and the simulators. */
  readonly pin: string;
  readonly envelope: string;
  readonly artifactsDir: string;
}

async function run(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
  const result = await agentctl(args, { env, quiet: true });
  if (result.code !== 0) throw new Error(`agentctl ${args[0]} ${args[1]}: ${result.stderr}`);
  return result.stdout;
}

/** Makes the key, artifact, manifest and envelope of `version` under `dir`. */
export async function prepareRelease(dir: string, version: string): Promise<BenchRelease> {
  const root = join(dir, "release");
  await mkdir(root, { recursive: true });
  const key = join(root, "bench.key");
  await run(["release", "keygen", "--out", key]);
  const pin = (await readFile(`${key}.pub`, "utf8")).trim();
  const artifact = join(root, "agent-linux-amd64");
  await writeFile(artifact, randomBytes(4096));
  const manifest = join(root, "manifest.json");
  const envelope = join(root, "release.json");
  await run([
    "release",
    "manifest",
    "--version",
    version,
    "--sequence",
    "2",
    "--artifact",
    `linux-amd64=${artifact}`,
    "--out",
    manifest,
  ]);
  await run(["release", "sign", "--key", key, "--in", manifest, "--out", envelope]);
  return { version, pin, envelope, artifactsDir: root };
}

/** Registers the release with the Control `ctlEnv` points at. */
export async function registerRelease(
  release: BenchRelease,
  ctlEnv: Readonly<Record<string, string>>,
): Promise<void> {
  await run(["release", "register", release.envelope, "--artifacts", release.artifactsDir], ctlEnv);
}
