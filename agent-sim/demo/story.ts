/**
 * The demo's story, step by step, through the real `agentctl` binary: sign a release
 * offline, register it, run a staged campaign and watch it complete; then a bad release
 * whose canaries fail, watched until it is rolled back.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { agentctl } from "./agentctl.js";

/** Where the story keeps its files and how it reaches Control. */
export interface StoryContext {
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly say: (text: string) => void;
}

/** Runs agentctl and fails the demo when it exits other than `expect`. */
export async function must(
  ctx: StoryContext,
  args: readonly string[],
  options: { expect?: number; quiet?: boolean; inherit?: boolean } = {},
): Promise<string> {
  const result = await agentctl(args, {
    env: ctx.env,
    ...(options.quiet !== undefined ? { quiet: options.quiet } : {}),
    ...(options.inherit !== undefined ? { inherit: options.inherit } : {}),
  });
  if (result.code !== (options.expect ?? 0)) {
    throw new Error(`agentctl ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
  }
  return result.stdout;
}

/** Makes a signing key offline and returns its pin. */
export async function makeSigningKey(ctx: StoryContext): Promise<{ keyFile: string; pin: string }> {
  await mkdir(ctx.dir, { recursive: true });
  const keyFile = join(ctx.dir, "release-signer.key");
  const out = await must(ctx, ["release", "keygen", "--out", keyFile, "--force"]);
  const pin = /ed25519:[A-Za-z0-9_-]{43}/.exec(out)?.[0];
  if (!pin) throw new Error(`keygen printed no pin: ${out}`);
  return { keyFile, pin };
}

/** Builds artifact files, a manifest and a signed envelope for `version`, and registers it. */
export async function signAndRegister(
  ctx: StoryContext,
  keyFile: string,
  version: string,
  sequence: number,
): Promise<void> {
  const artifacts = join(ctx.dir, `artifacts-${version}`);
  await mkdir(artifacts, { recursive: true });
  const platforms = ["linux-amd64", "linux-arm64"];
  for (const platform of platforms) {
    await writeFile(join(artifacts, `agent-${platform}`), randomBytes(64 * 1024));
  }
  const manifest = join(ctx.dir, `manifest-${version}.json`);
  const envelope = join(ctx.dir, `release-${version}.json`);
  await must(ctx, [
    "release",
    "manifest",
    "--version",
    version,
    "--sequence",
    String(sequence),
    ...platforms.flatMap((p) => ["--artifact", `${p}=${join(artifacts, `agent-${p}`)}`]),
    "--expires",
    "720h",
    "--out",
    manifest,
  ]);
  await must(ctx, ["release", "sign", "--key", keyFile, "--in", manifest, "--out", envelope]);
  await must(ctx, ["release", "register", envelope, "--artifacts", artifacts]);
}

/** Starts a campaign to `version` and watches it; resolves with the final phase. */
export async function runCampaign(
  ctx: StoryContext,
  version: string,
  batches: string,
  extra: readonly string[] = [],
): Promise<{ id: string; phase: string }> {
  const args = ["--version", version, "--batches", batches, ...extra];
  await must(ctx, ["campaign", "plan", ...args]);
  const id = (await must(ctx, ["campaign", "start", ...args, "--yes"])).trim();
  ctx.say(
    `Campaign ${id} started; watching it (agentctl campaign watch exits 0 only when it completes)`,
  );
  const watched = await agentctl(["campaign", "watch", id], { env: ctx.env, inherit: true });
  const shown = JSON.parse(
    await must(ctx, ["campaign", "show", id, "--summary", "--json"], { quiet: true }),
  ) as {
    campaign?: { phase?: string };
  };
  const phase = String(shown.campaign?.phase ?? "unknown")
    .replace(/^CAMPAIGN_PHASE_/, "")
    .toLowerCase();
  ctx.say(`Campaign ${id} ended ${phase} (watch exit code ${watched.code})`);
  return { id, phase };
}
