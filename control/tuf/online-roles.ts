/**
 * The online half of the release channel's TUF repository: snapshot and timestamp, signed
 * by Control's keys. Both are a pure function of the offline-signed targets.json and the
 * time, so every Control of a fleet serves the same bytes (ed25519 is deterministic):
 *
 * - snapshot version = the targets version, expiring with targets: a new snapshot exactly
 *   when targets change;
 * - timestamp version = window × 1 000 000 + snapshot version, where window counts
 *   `windowMs` periods since the epoch: it rises every window (re-signed long before its
 *   expiry, `ttlMs` after the window starts) and whenever the snapshot changes.
 */
import { MetadataKind } from "@tufjs/models";
import { tufSigner } from "../shared/tuf/keys.js";
import {
  buildSnapshot,
  buildTimestamp,
  metadataBytes,
  parseMetadata,
} from "../shared/tuf/repository.js";

/** How the online roles are signed. */
export interface OnlineRoleKeys {
  /** 32-byte ed25519 seeds (release key files). */
  readonly snapshotKey: Uint8Array;
  readonly timestampKey: Uint8Array;
  /** A timestamp is valid this long after its window starts. */
  readonly ttlMs: number;
  /** A new timestamp is signed every window (well within `ttlMs`). */
  readonly windowMs: number;
}

/** The snapshot and timestamp bytes for `targetsBytes` at `now`. */
export interface OnlineRoles {
  readonly snapshot: Buffer;
  readonly timestamp: Buffer;
  /** When the timestamp expires. */
  readonly expires: Date;
}

/** Signs snapshot and timestamp for the targets metadata `targetsBytes` at `now`. */
export async function signOnlineRoles(
  targetsBytes: Uint8Array,
  now: Date,
  keys: OnlineRoleKeys,
): Promise<OnlineRoles> {
  const targets = parseMetadata(MetadataKind.Targets, targetsBytes);
  const version = targets.signed.version;
  const snapshot = buildSnapshot(version, version, new Date(targets.signed.expires));
  snapshot.sign((await tufSigner(keys.snapshotKey)).sign);
  const snapshotBytes = metadataBytes(snapshot);
  const window = Math.floor(now.getTime() / keys.windowMs);
  const expires = new Date(window * keys.windowMs + keys.ttlMs);
  const timestamp = buildTimestamp(snapshotBytes, version, window * 1_000_000 + version, expires);
  timestamp.sign((await tufSigner(keys.timestampKey)).sign);
  return { snapshot: snapshotBytes, timestamp: metadataBytes(timestamp), expires };
}
