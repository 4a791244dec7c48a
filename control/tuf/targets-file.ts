/**
 * The release channel's `targets.json`, read once per change. Every campaign start, desired
 * version and rollout-plan group start asks whether the channel lists its release; reading and
 * parsing the file each time put file I/O on every start. The file is re-read only when its
 * identity changes: inode (a rename by `agentctl tuf sign`), size, modification and change
 * times. A change time is set by the kernel on every write and cannot be set back, but it is
 * coarse (a few ms): a file changed too recently (within {@link RACY_MS} of the read) is read
 * again next time, so two writes within one tick of the file system's clock are never
 * mistaken for one. A file that cannot be read or parsed is never kept.
 */
import type { BigIntStats } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { type Metadata, MetadataKind, type Targets } from "@tufjs/models";
import { parseMetadata } from "../shared/tuf/repository.js";

/** How recent a change may be before the file's identity is not trusted to show the next one. */
export const RACY_MS = 2_000;

/** The file system calls a {@link TargetsFile} makes (Node's own unless a test counts them). */
export interface TargetsFileIo {
  stat(path: string): Promise<BigIntStats>;
  readFile(path: string): Promise<Uint8Array>;
  /** Wall-clock time in epoch ms, compared with the file's change time (the file system's clock). */
  now(): number;
}

/** Node's file system and wall clock. */
export const NODE_TARGETS_IO: TargetsFileIo = {
  stat: (path) => stat(path, { bigint: true }),
  readFile: (path) => readFile(path),
  now: () => Date.now(),
};

/** The parsed targets metadata of a release channel. */
export type TargetsMetadata = Metadata<Targets>;

/** One `targets.json`, parsed and kept until the file changes. */
export interface TargetsFile {
  /**
   * The file's parsed metadata, read from disk only when its identity changed since the last
   * read (or that read was too close to a change). Rejects when it cannot be read or parsed.
   */
  read(): Promise<TargetsMetadata>;
}

function identity(s: BigIntStats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** A {@link TargetsFile} over the file at `path`. */
export function targetsFile(path: string, io: TargetsFileIo = NODE_TARGETS_IO): TargetsFile {
  let kept: { identity: string; targets: TargetsMetadata } | undefined;
  return {
    async read() {
      const before = await io.stat(path);
      if (kept !== undefined && kept.identity === identity(before)) return kept.targets;
      kept = undefined;
      const targets = parseMetadata(MetadataKind.Targets, await io.readFile(path));
      const after = await io.stat(path);
      const settled = io.now() - Number(after.ctimeMs) >= RACY_MS;
      if (settled && identity(after) === identity(before)) {
        kept = { identity: identity(after), targets };
      }
      return targets;
    },
  };
}
