/**
 * A release channel on disk for tests, as `agentctl tuf` leaves it for Control's `tuf.dir`:
 * `root.json`, `1.root.json` and `targets.json` signed with real ed25519 keys, and the
 * snapshot and timestamp key files Control signs with. {@link TufChannel.list} re-signs the
 * targets listing exactly the releases given, so a test can take a release off the channel.
 * {@link AgentctlTufRepo} writes one the operator's way instead, with `agentctl tuf`.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metadata, Targets } from "@tufjs/models";
import { serializePrivateKey } from "../../control/shared/release/index.js";
import { tufSigner } from "../../control/shared/tuf/keys.js";
import {
  buildTargets,
  metadataBytes,
  type ReleaseTarget,
  withTargets,
} from "../../control/shared/tuf/repository.js";
import { type CliResult, runCli } from "../unit/cli/run-cli.js";
import { TestTufRepo } from "./tuf-repo.js";

const DAY = 24 * 3_600_000;

/** A release to list: its version and sequence, for linux-amd64 unless told. */
export interface ChannelRelease {
  readonly version: string;
  readonly sequence: number;
  readonly platform?: string;
  /** The artifact's bytes (default: a few bytes naming the version). */
  readonly bytes?: Uint8Array;
}

/** A channel on disk. */
export interface TufChannel {
  /** The repository directory (`tuf.dir`). */
  readonly dir: string;
  /** The `tuf` config section of a Control serving this channel. */
  readonly config: { dir: string; snapshotKey: string; timestampKey: string };
  /** Re-signs targets.json to list exactly `releases` (its version goes up). */
  list(releases: readonly ChannelRelease[]): Promise<void>;
}

function targetOf(r: ChannelRelease): ReleaseTarget {
  const bytes = r.bytes ?? new TextEncoder().encode(`agent ${r.version}`);
  return {
    version: r.version,
    sequence: r.sequence,
    platform: r.platform ?? "linux-amd64",
    length: bytes.byteLength,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}

/** Writes a channel listing `releases` to a new temporary directory. */
export async function writeTufChannel(releases: readonly ChannelRelease[]): Promise<TufChannel> {
  const repo = await TestTufRepo.create();
  await repo.stop();
  const base = await mkdtemp(join(tmpdir(), "tuf-channel-"));
  const dir = join(base, "repo");
  await mkdir(dir);
  const config = {
    dir,
    snapshotKey: join(base, "snapshot.key"),
    timestampKey: join(base, "timestamp.key"),
  };
  await writeFile(config.snapshotKey, serializePrivateKey(repo.keys.snapshot.privateKey), {
    mode: 0o600,
  });
  await writeFile(config.timestampKey, serializePrivateKey(repo.keys.timestamp.privateKey), {
    mode: 0o600,
  });
  await writeFile(join(dir, "root.json"), repo.initialRoot);
  await writeFile(join(dir, "1.root.json"), repo.initialRoot);
  let version = repo.targets.signed.version;
  const list = async (listed: readonly ChannelRelease[]) => {
    const expires = new Date(Date.now() + DAY);
    const empty = new Metadata(
      new Targets({ ...buildTargets(expires).signed, version, targets: {} }),
    );
    const md = withTargets(empty, listed.map(targetOf), expires);
    version = md.signed.version;
    for (const k of repo.keys.targets) md.sign((await tufSigner(k.privateKey)).sign);
    await writeFile(join(dir, "targets.json"), metadataBytes(md));
  };
  await list(releases);
  return { dir, config, list };
}

/**
 * A release channel written by `agentctl tuf` itself, as an operator writes it: keys made by
 * `agentctl release keygen` in `dir/<name>.key`, the repository in `dir/repo`. Every call
 * runs the real command in-process and throws with its stderr when it exits non-zero.
 */
export class AgentctlTufRepo {
  /** The repository directory (`tuf.dir`). */
  readonly repo: string;
  /** Each key's public pin, by name. */
  readonly pins = new Map<string, string>();

  private constructor(readonly dir: string) {
    this.repo = join(dir, "repo");
  }

  /** Makes `dir/repo` and one key per name of `keys`. */
  static async create(dir: string, keys: readonly string[]): Promise<AgentctlTufRepo> {
    const r = new AgentctlTufRepo(dir);
    await mkdir(r.repo);
    for (const name of keys) {
      const pin = await r.cli("release", "keygen", "--out", r.key(name));
      r.pins.set(name, pin.stdout.trim());
    }
    return r;
  }

  /** The private key file of key `name`. */
  key(name: string): string {
    return join(this.dir, `${name}.key`);
  }

  /** The public pin of key `name`. */
  pin(name: string): string {
    const pin = this.pins.get(name);
    if (pin === undefined) throw new Error(`no key ${name}`);
    return pin;
  }

  /** Runs `agentctl argv…`; throws when it exits non-zero. */
  async cli(...argv: string[]): Promise<CliResult> {
    const result = await runCli(argv);
    if (result.code !== 0) throw new Error(`agentctl ${argv.join(" ")}: ${result.stderr}`);
    return result;
  }

  /**
   * `tuf init` with `root` keys (at `rootThreshold`), then `tuf sign --role root` by each of
   * them; the targets, snapshot and timestamp keys are the ones named.
   */
  async init(o: {
    root: readonly string[];
    rootThreshold?: number;
    targets: string;
    snapshot: string;
    timestamp: string;
  }): Promise<void> {
    await this.cli(
      "tuf",
      "init",
      "--repo",
      this.repo,
      ...o.root.flatMap((k) => ["--root-key", this.pin(k)]),
      ...(o.rootThreshold === undefined ? [] : ["--root-threshold", String(o.rootThreshold)]),
      "--targets-key",
      this.pin(o.targets),
      "--snapshot-key",
      this.pin(o.snapshot),
      "--timestamp-key",
      this.pin(o.timestamp),
    );
    for (const k of o.root) await this.sign("root", k);
  }

  /** `tuf add-target`: `version` at `sequence`, its `platform` artifact the file at `file`. */
  async addTarget(version: string, sequence: number, platform: string, file: string) {
    await this.cli(
      "tuf",
      "add-target",
      "--repo",
      this.repo,
      "--version",
      version,
      "--sequence",
      String(sequence),
      "--artifact",
      `${platform}=${file}`,
    );
  }

  /** `tuf sign --role role` with key `name`. */
  async sign(role: "root" | "targets", name: string): Promise<void> {
    await this.cli("tuf", "sign", "--repo", this.repo, "--role", role, "--key", this.key(name));
  }
}
