/**
 * Attack (a lock-out by configuration): Control signs the channel's timestamp with version
 * `window × 1 000 000 + snapshot version`, where `window` counts `tuf.timestampWindowSeconds`
 * periods since the epoch. Lengthening the window (1 h to 1 day, both accepted by the config),
 * or one Control of an active-active fleet configured with another window, would make the
 * version fall by orders of magnitude; TUF forbids a timestamp version to decrease, so every
 * Agent would refuse every later timestamp and the fleet would be frozen.
 *
 * Defence: the window is fixed per timestamp key. The first Control to sign with a key records
 * its window (`fleet_settings`, shared by every Control of the fleet); a Control configured
 * with another window for that key is refused before it signs anything
 * (`test/integration/tuf-timestamp-window.test.ts` runs it on a real database). Under the one
 * window a key signs with, a later timestamp never has a lower version.
 */
import { MetadataKind } from "@tufjs/models";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../../control/shared/release/index.js";
import { tufSigner } from "../../../control/shared/tuf/keys.js";
import {
  buildTargets,
  metadataBytes,
  parseMetadata,
} from "../../../control/shared/tuf/repository.js";
import { signOnlineRoles } from "../../../control/tuf/online-roles.js";
import { pinTimestampWindow, type RecordSetting } from "../../../control/tuf/window-pin.js";

const HOUR = 3_600_000;

/** A fleet's settings table in memory: the first value recorded under a name stays. */
function settings(): RecordSetting {
  const held = new Map<string, string>();
  return async (name, value) => {
    if (!held.has(name)) held.set(name, value);
    return held.get(name) as string;
  };
}

async function channel() {
  const [targetsKey, snapshot, timestamp] = await Promise.all([
    generateKeyPair(),
    generateKeyPair(),
    generateKeyPair(),
  ]);
  const targets = buildTargets(new Date(Date.now() + 30 * 24 * HOUR));
  targets.sign((await tufSigner(targetsKey.privateKey)).sign);
  return {
    bytes: metadataBytes(targets),
    keys: { snapshotKey: snapshot.privateKey, timestampKey: timestamp.privateKey },
  };
}

const version = (b: Uint8Array) => parseMetadata(MetadataKind.Timestamp, b).signed.version;

describe("the online timestamp's version across a change of tuf.timestampWindowSeconds", () => {
  it("is never signed lower: a lengthened window under the same key is refused before signing", async () => {
    const { bytes, keys } = await channel();
    const fleet = settings();
    expect(await pinTimestampWindow(fleet, keys.timestampKey, 3600)).toBeUndefined();
    const now = new Date();
    await signOnlineRoles(bytes, now, { ...keys, windowMs: HOUR, ttlMs: 24 * HOUR });
    // The lengthened configuration (1 day), or a second Control configured so.
    const problem = await pinTimestampWindow(fleet, keys.timestampKey, 86_400);
    expect(problem).toMatch(/^tuf\.timestampWindowSeconds: 86400 is not 3600, /);
    // What it would have signed: lower, which every Agent refuses as a rollback.
    const before = await signOnlineRoles(bytes, now, { ...keys, windowMs: HOUR, ttlMs: 24 * HOUR });
    const lengthened = await signOnlineRoles(bytes, new Date(now.getTime() + 60_000), {
      ...keys,
      windowMs: 24 * HOUR,
      ttlMs: 7 * 24 * HOUR,
    });
    expect(version(lengthened.timestamp)).toBeLessThan(version(before.timestamp));
  });

  it("never goes back under the one window a key signs with", async () => {
    const { bytes, keys } = await channel();
    const now = Date.now();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 86_400 }),
        fc.integer({ min: 0, max: 30 * 24 * HOUR }),
        fc.integer({ min: 0, max: 30 * 24 * HOUR }),
        async (seconds, a, b) => {
          const o = { ...keys, windowMs: seconds * 1000, ttlMs: 2 * seconds * 1000 };
          const [early, late] = [Math.min(a, b), Math.max(a, b)];
          const x = await signOnlineRoles(bytes, new Date(now + early), o);
          const y = await signOnlineRoles(bytes, new Date(now + late), o);
          expect(version(y.timestamp)).toBeGreaterThanOrEqual(version(x.timestamp));
        },
      ),
      { numRuns: 50 },
    );
  });
});
