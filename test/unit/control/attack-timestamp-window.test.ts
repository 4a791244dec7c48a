/**
 * Attack (a lock-out by configuration): Control signs the channel's timestamp with version
 * `window × 1 000 000 + snapshot version`, where `window` counts `tuf.timestampWindowSeconds`
 * periods since the epoch. Lengthening the window (1 h to 1 day, both accepted by the config),
 * or one Control of an active-active fleet configured with another window, makes the version
 * fall by orders of magnitude. TUF forbids a timestamp version to decrease: every Agent that
 * trusted the earlier timestamp refuses every later one (tuf-js: a rollback), so the whole
 * fleet is frozen on its current release, and only a root rotation of the timestamp key
 * undoes it. Whoever can change Control's configuration can lock every node out of updates.
 *
 * Expected: for the same targets, a timestamp signed later never has a lower version, whatever
 * window the config chose (the version must not depend on the window length), so the real
 * TUF client accepts it.
 */
import { MetadataKind } from "@tufjs/models";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../../control/shared/release/index.js";
import { tufSigner } from "../../../control/shared/tuf/keys.js";
import {
  buildTargets,
  metadataBytes,
  parseMetadata,
} from "../../../control/shared/tuf/repository.js";
import { signOnlineRoles } from "../../../control/tuf/online-roles.js";

const HOUR = 3_600_000;

describe("the online timestamp's version across a change of tuf.timestampWindowSeconds", () => {
  it("never goes back when the window grows from 1 h to 1 day", async () => {
    const [targetsKey, snapshot, timestamp] = await Promise.all([
      generateKeyPair(),
      generateKeyPair(),
      generateKeyPair(),
    ]);
    const targets = buildTargets(new Date(Date.now() + 30 * 24 * HOUR));
    targets.sign((await tufSigner(targetsKey.privateKey)).sign);
    const bytes = metadataBytes(targets);
    const keys = { snapshotKey: snapshot.privateKey, timestampKey: timestamp.privateKey };
    const now = new Date();
    const before = await signOnlineRoles(bytes, now, { ...keys, windowMs: HOUR, ttlMs: 24 * HOUR });
    const after = await signOnlineRoles(bytes, new Date(now.getTime() + 60_000), {
      ...keys,
      windowMs: 24 * HOUR,
      ttlMs: 7 * 24 * HOUR,
    });
    const version = (b: Uint8Array) => parseMetadata(MetadataKind.Timestamp, b).signed.version;
    expect(version(after.timestamp)).toBeGreaterThanOrEqual(version(before.timestamp));
  });
});
