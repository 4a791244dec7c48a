/**
 * The release channel as a TUF repository (metadata built with @tufjs/models): the root
 * names the keys and thresholds of the four top-level roles, targets lists one target per
 * release and platform (`agent/<version>/<platform>`, its length, sha256 and the custom
 * fields `version` and `sequence`), snapshot pins the targets version, timestamp pins the
 * snapshot's bytes. Root and targets are signed offline (`agentctl tuf`); snapshot and
 * timestamp online by Control. Everything here is pure: files are the callers'.
 */
import { createHash } from "node:crypto";
import {
  type Key,
  Metadata,
  type MetadataKind,
  MetaFile,
  Root,
  Snapshot,
  TargetFile,
  Targets,
  Timestamp,
} from "@tufjs/models";

/** The TUF specification version written into new metadata. */
export const TUF_SPEC_VERSION = "1.0.31";

/** The target path of a release's artifact for one platform. */
export function releaseTargetPath(version: string, platform: string): string {
  return `agent/${version}/${platform}`;
}

/** The keys and threshold of one role. */
export interface RoleKeys {
  readonly keys: readonly Key[];
  readonly threshold: number;
}

/** What a root names. */
export interface RootSpec {
  readonly root: RoleKeys;
  readonly targets: RoleKeys;
  readonly snapshot: RoleKeys;
  readonly timestamp: RoleKeys;
  readonly version: number;
  readonly expires: Date;
}

/** Metadata's time format: RFC 3339 in UTC to the second. */
export function tufTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** A new, unsigned root. Throws when a threshold exceeds its distinct keys. */
export function buildRoot(spec: RootSpec): Metadata<Root> {
  const keys: Record<string, ReturnType<Key["toJSON"]>> = {};
  const roles: Record<string, { keyids: string[]; threshold: number }> = {};
  for (const name of ["root", "targets", "snapshot", "timestamp"] as const) {
    const role = spec[name];
    const ids = [...new Set(role.keys.map((k) => k.keyID))];
    if (!Number.isInteger(role.threshold) || role.threshold < 1 || role.threshold > ids.length) {
      throw new Error(
        `the ${name} threshold must be from 1 to its ${ids.length} distinct keys, got ${role.threshold}`,
      );
    }
    for (const key of role.keys) keys[key.keyID] = key.toJSON();
    roles[name] = { keyids: ids, threshold: role.threshold };
  }
  // @tufjs/models exports no Role class: the root is built from its JSON form.
  return new Metadata(
    Root.fromJSON({
      _type: "root",
      spec_version: TUF_SPEC_VERSION,
      version: spec.version,
      expires: tufTime(spec.expires),
      keys,
      roles,
      consistent_snapshot: false,
    }),
  );
}

/** The role keys a root names, to build its successor from. */
export function rootSpecOf(root: Root): Omit<RootSpec, "version" | "expires"> {
  const roleKeys = (name: string): RoleKeys => {
    const role = root.roles[name];
    if (role === undefined) throw new Error(`the root names no ${name} role`);
    return {
      keys: role.keyIDs.map((id) => {
        const key = root.keys[id];
        if (key === undefined) throw new Error(`the root names key ${id} but does not hold it`);
        return key;
      }),
      threshold: role.threshold,
    };
  };
  return {
    root: roleKeys("root"),
    targets: roleKeys("targets"),
    snapshot: roleKeys("snapshot"),
    timestamp: roleKeys("timestamp"),
  };
}

/** Empty, unsigned targets metadata (version 1). */
export function buildTargets(expires: Date): Metadata<Targets> {
  return new Metadata(
    new Targets({ version: 1, specVersion: TUF_SPEC_VERSION, expires: tufTime(expires) }),
  );
}

/** One release's artifact to list. */
export interface ReleaseTarget {
  readonly version: string;
  readonly sequence: number;
  readonly platform: string;
  readonly length: number;
  readonly sha256: string;
}

/**
 * The next targets version listing `releases` besides what `current` lists, unsigned (its
 * signatures are dropped: the targets keys sign it again), expiring at `expires`.
 */
export function withTargets(
  current: Metadata<Targets>,
  releases: readonly ReleaseTarget[],
  expires: Date,
): Metadata<Targets> {
  const targets: Record<string, TargetFile> = { ...current.signed.targets };
  for (const r of releases) {
    const path = releaseTargetPath(r.version, r.platform);
    targets[path] = new TargetFile({
      path,
      length: r.length,
      hashes: { sha256: r.sha256 },
      unrecognizedFields: { custom: { version: r.version, sequence: r.sequence } },
    });
  }
  return new Metadata(
    new Targets({
      version: current.signed.version + 1,
      specVersion: current.signed.specVersion,
      expires: tufTime(expires),
      targets,
    }),
  );
}

/**
 * The next targets version without any artifact of release `version` (what a yank takes out of
 * the signed channel), unsigned, expiring at `expires`; with the paths it removed (none: the
 * release was not listed, and the caller should write nothing).
 */
export function withoutRelease(
  current: Metadata<Targets>,
  version: string,
  expires: Date,
): { readonly next: Metadata<Targets>; readonly removed: readonly string[] } {
  const prefix = releaseTargetPath(version, "");
  const targets: Record<string, TargetFile> = {};
  const removed: string[] = [];
  for (const [path, file] of Object.entries(current.signed.targets)) {
    if (path.startsWith(prefix)) removed.push(path);
    else targets[path] = file;
  }
  const next = new Metadata(
    new Targets({
      version: current.signed.version + 1,
      specVersion: current.signed.specVersion,
      expires: tufTime(expires),
      targets,
    }),
  );
  return { next, removed: removed.sort() };
}

/** Snapshot metadata pinning `targetsVersion`, unsigned. */
export function buildSnapshot(targetsVersion: number, version: number, expires: Date) {
  return new Metadata(
    new Snapshot({
      version,
      specVersion: TUF_SPEC_VERSION,
      expires: tufTime(expires),
      meta: { "targets.json": new MetaFile({ version: targetsVersion }) },
    }),
  );
}

/** Timestamp metadata pinning the exact bytes of snapshot `snapshotVersion`, unsigned. */
export function buildTimestamp(
  snapshotBytes: Uint8Array,
  snapshotVersion: number,
  version: number,
  expires: Date,
) {
  return new Metadata(
    new Timestamp({
      version,
      specVersion: TUF_SPEC_VERSION,
      expires: tufTime(expires),
      snapshotMeta: new MetaFile({
        version: snapshotVersion,
        length: snapshotBytes.byteLength,
        hashes: { sha256: createHash("sha256").update(snapshotBytes).digest("hex") },
      }),
    }),
  );
}

/** The bytes a metadata file is stored as (2-space JSON, newline). */
export function metadataBytes(md: Metadata<Root | Targets | Snapshot | Timestamp>): Buffer {
  return Buffer.from(`${JSON.stringify(md.toJSON(), null, 2)}\n`);
}

/** Parses a stored metadata file of `kind`. Throws naming the file on bad content. */
export function parseMetadata<K extends MetadataKind>(
  kind: K,
  bytes: Uint8Array | string,
  name = `${kind}.json`,
) {
  try {
    const json = JSON.parse(typeof bytes === "string" ? bytes : Buffer.from(bytes).toString());
    return Metadata.fromJSON(kind as MetadataKind.Root, json) as unknown as Metadata<
      K extends MetadataKind.Root
        ? Root
        : K extends MetadataKind.Targets
          ? Targets
          : K extends MetadataKind.Snapshot
            ? Snapshot
            : Timestamp
    >;
  } catch (error) {
    throw new Error(`${name} is not ${kind} metadata: ${(error as Error).message}`);
  }
}
