/**
 * Engine features: the parts of the engine's judgement that a Control of an older release does
 * not have, and without which it would misjudge a campaign that uses them (docs/decisions.md,
 * "Versioned engine features"). A campaign records the features it uses when it is created
 * ({@link campaignFeatures}, stored beside it: `campaigns.engine_features`); a Control leads a
 * campaign only when it knows every feature recorded ({@link unknownFeatures}), and otherwise
 * steps aside from it (the worker neither decides nor writes it) while it leads the rest.
 *
 * The list is closed and only grows: a release that adds a judgement an older release would get
 * wrong adds a name here, and {@link campaignFeatures} records it for the campaigns that use it.
 * A name is never reused nor removed while a release that records it may run beside another.
 */
import type { CampaignSpec } from "./spec.js";

/**
 * Every engine feature this release knows, in a fixed order:
 * - `deferral`: nodes may answer DEFERRED and wait, as deferred, to be offered again
 *   (`deferral.ts`; node fields `deferredAt`, `deferRetryAt`, `deferrals`, `deferredSeq`); a
 *   Control without it takes a node that only deferred for one that never reported
 *   (`failed/reconnect_timeout`).
 * - `download_budget`: at most `spec.maxDownloads` nodes fetch at once (`download-budget.ts`); a
 *   Control without it offers every node of the batch at once.
 * - `lost_after_upgrade`: a node back on the target that goes away before its batch passed is
 *   judged from when it went (`judge-away.ts`, node field `awaySince`; code `lost_after_upgrade`).
 * - `report_seq`: reports are ordered by the database's numbers (`report-order.ts`,
 *   `ObservedReport.seq`, node field `deferredSeq`), never by the stamps of the Controls.
 */
export const ENGINE_FEATURES = [
  "deferral",
  "download_budget",
  "lost_after_upgrade",
  "report_seq",
] as const;

/** One engine feature of {@link ENGINE_FEATURES}. */
export type EngineFeature = (typeof ENGINE_FEATURES)[number];

/**
 * The engine features a campaign of `spec` uses, in {@link ENGINE_FEATURES}' order: deferral,
 * lost_after_upgrade and report_seq always (any node may defer, go away after its upgrade, or
 * report through two Controls), download_budget when the spec sets `maxDownloads`.
 */
export function campaignFeatures(spec: CampaignSpec): EngineFeature[] {
  const used = new Set<EngineFeature>(["deferral", "lost_after_upgrade", "report_seq"]);
  if (spec.maxDownloads !== undefined && spec.maxDownloads > 0) used.add("download_budget");
  return ENGINE_FEATURES.filter((f) => used.has(f));
}

/**
 * The features of `recorded` (a campaign's stored list) that are not in `known` (default: this
 * release's {@link ENGINE_FEATURES}), each once, sorted; empty when a Control knowing `known` may
 * lead the campaign.
 */
export function unknownFeatures(
  recorded: readonly string[],
  known: readonly string[] = ENGINE_FEATURES,
): string[] {
  const knownSet = new Set(known);
  return [...new Set(recorded.filter((f) => !knownSet.has(f)))].sort();
}
