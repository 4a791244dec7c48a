/** Yanked releases on Control's database (`releases.yanked_at`, migration 0015). */
import type { ReleaseYank } from "../offer-release.js";
import type { Queryable } from "./reads.js";

/** See `CampaignTransaction.readYanks`. */
export async function readYanks(
  q: Queryable,
  versions: readonly string[],
): Promise<Map<string, ReleaseYank>> {
  const out = new Map<string, ReleaseYank>();
  if (versions.length === 0) return out;
  const result = await q.query<{
    version: string;
    yanked_at: Date;
    yanked_by: string | null;
    yank_reason: string | null;
  }>(
    `select version, yanked_at, yanked_by, yank_reason from releases
      where version = any($1::text[]) and yanked_at is not null`,
    [versions],
  );
  for (const r of result.rows) {
    out.set(r.version, {
      version: r.version,
      at: r.yanked_at.getTime(),
      by: r.yanked_by ?? "",
      reason: r.yank_reason ?? "",
    });
  }
  return out;
}
