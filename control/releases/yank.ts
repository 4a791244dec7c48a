/**
 * Yanking a registered release (`agentctl release yank`): in one transaction, the release's
 * yank columns (the first yank's time, actor and reason stay), an audit row naming the
 * running campaigns to it, and a notification that marks those campaigns due on the leader.
 * What a yank means is the engine's and the worker's: they read it at every decision.
 */
import type { Clock } from "../clock.js";
import { type Actor, stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity, type ReleaseRecord } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { CAMPAIGNS_CHANNEL } from "../shared/notify-channels.js";

/** The most characters a yank's reason may hold. */
export const MAX_YANK_REASON = 500;

/** A yank request. */
export interface YankInput {
  readonly version: string;
  readonly reason: string;
  readonly actor: Actor;
}

/** What a yank did. */
export interface YankOutcome {
  readonly record: ReleaseRecord;
  /** False when the release was already yanked (nothing changed). */
  readonly yanked: boolean;
  /** The unfinished campaigns to it, oldest first. */
  readonly campaignIds: readonly string[];
}

/**
 * Yanks `version`.
 * @throws invalid_argument for an empty version or reason (or a reason over
 *   {@link MAX_YANK_REASON} characters), release_not_found for an unknown version; nothing
 *   changes then.
 */
export async function yankRelease(
  deps: { readonly db: Database; readonly clock: Clock },
  input: YankInput,
): Promise<YankOutcome> {
  const version = input.version.trim();
  const reason = input.reason.trim();
  if (version === "")
    throw new ControlError("invalid_argument", "a version is required", { field: "version" });
  if (reason === "")
    throw new ControlError("invalid_argument", "a reason is required: say why it is yanked", {
      field: "reason",
    });
  if (reason.length > MAX_YANK_REASON)
    throw new ControlError(
      "invalid_argument",
      `the reason has ${reason.length} characters; at most ${MAX_YANK_REASON}`,
      { field: "reason" },
    );
  const outcome = await deps.db.em().transactional(async (em) => {
    const rows = await em.execute<{ version: string }[]>(
      "select version from releases where version = ? for update",
      [version],
    );
    if (rows.length === 0)
      throw new ControlError("release_not_found", `no release with version "${version}"`);
    const record = (await em.findOne(ReleaseEntity, { version })) as ReleaseRecord;
    const live = await em.execute<{ id: string }[]>(
      "select id from campaigns where target_version = ? and finished_at is null order by created_at, id",
      [version],
    );
    const campaignIds = live.map((r) => r.id);
    if (record.yankedAt) return { record, yanked: false, campaignIds };
    const now = deps.clock.now();
    record.yankedAt = now;
    record.yankedBy = input.actor.name;
    record.yankReason = reason;
    stageAudit(em, {
      actor: input.actor,
      action: "release.yank",
      time: now,
      message: `release ${version} yanked: ${reason}${campaignIds.length > 0 ? `; ${campaignIds.length} running campaign(s) to it take on_breach` : ""}`,
      detail: { version, reason, campaignIds },
    });
    await em.flush();
    for (const id of campaignIds)
      await em.execute(`select pg_notify('${CAMPAIGNS_CHANNEL}', ?)`, [id]);
    return { record, yanked: true, campaignIds };
  });
  return outcome;
}
