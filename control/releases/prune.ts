/**
 * `agentctl release prune`: frees the artifact bytes (`artifact_files`) of the releases
 * nothing needs, as {@link planPrune} decides, in one transaction under the registry's lock
 * and the campaign start lock (no release is registered and no campaign, plan group or
 * desired version starts to a release while its files go), with one `release.prune` audit
 * row. The release rows, their signed envelopes included, stay; a file another kept release
 * names stays too. A dry run reads the same and changes nothing.
 */

import { START_LOCK_KEY } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import { type Actor, stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import { type KeptRelease, type PruneRelease, planPrune } from "./prune-plan.js";
import { REGISTRY_LOCK_KEY } from "./registry.js";

/** How many of the newest releases a prune keeps when not told. */
export const DEFAULT_PRUNE_KEEP = 3;

/** A prune request. */
export interface PruneInput {
  readonly keep: number;
  readonly dryRun: boolean;
  readonly actor: Actor;
}

/** A release whose bytes go. */
export interface PrunedRelease {
  readonly version: string;
  readonly sequence: number;
  readonly yanked: boolean;
  readonly freedBytes: number;
}

/** What a prune did (or, dry, would do). */
export interface PruneOutcome {
  readonly pruned: readonly PrunedRelease[];
  readonly kept: readonly KeptRelease[];
  readonly freedBytes: number;
}

/** What a prune needs. */
export interface PruneDeps {
  readonly db: Database;
  readonly clock: Clock;
}

/** The versions in use, each with why (the first reason found wins). */
const IN_USE_SQL = `
  select agent_version as version, 'a node runs it' as reason, 1 as rank
    from nodes where agent_version <> ''
  union all
  select previous_version, 'a node may roll back to it', 2
    from nodes where previous_version <> ''
  union all
  select target_version, 'a live campaign targets it', 3
    from campaigns where finished_at is null
  union all
  select target_version, 'a desired version names it', 4 from desired_versions
  union all
  select state->'template'->>'targetVersion', 'a running plan targets it', 5
    from rollout_plans where phase = 'running'
  order by rank`;

/** Runs a prune; see the file's comment. */
export async function pruneReleases(deps: PruneDeps, input: PruneInput): Promise<PruneOutcome> {
  return await deps.db.em().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(?)", [REGISTRY_LOCK_KEY]);
    await em.execute("select pg_advisory_xact_lock(?)", [START_LOCK_KEY]);
    const records = await em.find(ReleaseEntity, {}, { orderBy: { sequence: "asc" } });
    const files = await em.execute<{ sha256: string; size: string | number }[]>(
      "select sha256, size from artifact_files",
    );
    const sizes = new Map(files.map((f) => [f.sha256, Number(f.size)]));
    const storedOf = (r: (typeof records)[number]) =>
      r.artifacts.filter((a) => a.url === "" && sizes.has(a.sha256)).map((a) => a.sha256);
    const inUse = new Map<string, string>();
    for (const row of await em.execute<{ version: string | null; reason: string }[]>(IN_USE_SQL)) {
      if (row.version && !inUse.has(row.version)) inUse.set(row.version, row.reason);
    }
    const releases: PruneRelease[] = records.map((r) => ({
      version: r.version,
      sequence: r.sequence,
      yanked: r.yankedAt != null,
      stored: storedOf(r).length > 0,
    }));
    const plan = planPrune({ releases, inUse, keep: input.keep });
    const byVersion = new Map(records.map((r) => [r.version, r]));
    const keptFiles = new Set(
      plan.kept.flatMap((k) => {
        const record = byVersion.get(k.version);
        return record ? storedOf(record) : [];
      }),
    );
    const freed = new Set<string>();
    const pruned: PrunedRelease[] = plan.prune.map((p) => {
      const record = byVersion.get(p.version);
      let bytes = 0;
      for (const sha of record ? storedOf(record) : []) {
        if (keptFiles.has(sha) || freed.has(sha)) continue;
        freed.add(sha);
        bytes += sizes.get(sha) ?? 0;
      }
      return { version: p.version, sequence: p.sequence, yanked: p.yanked, freedBytes: bytes };
    });
    const freedBytes = pruned.reduce((sum, p) => sum + p.freedBytes, 0);
    if (!input.dryRun && pruned.length > 0) {
      await em.execute(
        "delete from artifact_files where sha256 in (select jsonb_array_elements_text(?::jsonb))",
        [JSON.stringify([...freed])],
      );
      const names = pruned.map((p) => p.version);
      stageAudit(em, {
        actor: input.actor,
        action: "release.prune",
        time: deps.clock.now(),
        message: `pruned the artifacts of ${pruned.length} release${pruned.length === 1 ? "" : "s"} (${names.slice(0, 20).join(", ")}${names.length > 20 ? ", …" : ""}), ${freedBytes} bytes freed; kept ${plan.kept.length}`,
        detail: {
          keep: input.keep,
          pruned: names,
          freedBytes,
          kept: plan.kept.map((k) => ({ version: k.version, reason: k.reason })),
        },
      });
      await em.flush();
    }
    return { pruned, kept: plan.kept, freedBytes };
  });
}

/** The sha256s of `sha256s` whose bytes Control stores (a pruned file is missing). */
export async function storedFiles(db: Database, sha256s: readonly string[]): Promise<Set<string>> {
  if (sha256s.length === 0) return new Set();
  const rows = await db
    .em()
    .execute<{ sha256: string }[]>(
      "select sha256 from artifact_files where sha256 in (select jsonb_array_elements_text(?::jsonb))",
      [JSON.stringify([...new Set(sha256s)])],
    );
  return new Set(rows.map((r) => r.sha256));
}
