/** The registered releases as admission reads them, from Control's database. */
import type { AdmissionRelease } from "../campaign/index.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import { storedFiles } from "../releases/prune.js";

/**
 * Looks a release up by version: its sequence, expiry, platforms and yank; undefined when
 * unknown. A platform whose artifact Control served but no longer stores (`release prune`)
 * is not among its platforms: no node could download it ("has no artifact for …").
 */
export type ReleaseLookup = (version: string) => Promise<AdmissionRelease | undefined>;

/** A {@link ReleaseLookup} over the `releases` table. */
export function sqlReleaseLookup(db: Database): ReleaseLookup {
  return async (version) => {
    const release = await db.em().findOne(ReleaseEntity, { version });
    if (!release) return undefined;
    const stored = await storedFiles(
      db,
      release.artifacts.filter((a) => a.url === "").map((a) => a.sha256),
    );
    return {
      version: release.version,
      sequence: release.sequence,
      expiresAt: release.expiresAt.getTime(),
      platforms: release.artifacts
        .filter((a) => a.url !== "" || stored.has(a.sha256))
        .map((a) => a.platform),
      ...(release.yankedAt ? { yanked: { reason: release.yankReason ?? "" } } : {}),
    };
  };
}
