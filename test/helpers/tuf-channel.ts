/**
 * A release channel on disk for tests, as `agentctl tuf` leaves it for Control's `tuf.dir`:
 * `root.json`, `1.root.json` and `targets.json` signed with real ed25519 keys, and the
 * snapshot and timestamp key files Control signs with. {@link TufChannel.list} re-signs the
 * targets listing exactly the releases given, so a test can take a release off the channel.
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
