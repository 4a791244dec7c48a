/** The registered releases as admission reads them, from Control's database. */
import type { AdmissionRelease } from "../campaign/index.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";

/**
 * Looks a release up by version: its sequence, expiry, platforms and yank; undefined when
 * unknown.
 */
export type ReleaseLookup = (version: string) => Promise<AdmissionRelease | undefined>;

/** A {@link ReleaseLookup} over the `releases` table. */
export function sqlReleaseLookup(db: Database): ReleaseLookup {
  return async (version) => {
    const release = await db.em().findOne(ReleaseEntity, { version });
    if (!release) return undefined;
    return {
      version: release.version,
      sequence: release.sequence,
      expiresAt: release.expiresAt.getTime(),
      platforms: release.artifacts.map((a) => a.platform),
      ...(release.yankedAt ? { yanked: { reason: release.yankReason ?? "" } } : {}),
    };
  };
}
