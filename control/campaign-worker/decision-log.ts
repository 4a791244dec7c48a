/**
 * The one log line of a decision that changed something or gave reasons: the campaign, its
 * phase and batch, what changed, how long each step took, and the engine's reasons (the
 * first 20, with the count of the rest).
 */
import type { Logger } from "../log.js";
import type { DecisionOutcome } from "./decision.js";

/** Logs `out` of `campaignId` at info when it carries reasons or events; else nothing. */
export function logDecision(log: Logger, campaignId: string, out: DecisionOutcome): void {
  const d = out.decision;
  if (!d || (d.reasons.length === 0 && d.events.length === 0)) return;
  log.info(
    {
      campaignId,
      phase: (d.changes.campaign ?? undefined)?.phase,
      batch: (d.changes.campaign ?? undefined)?.currentBatch,
      changedNodes: d.changes.nodes.length,
      ms: out.timings,
      actions: d.actions.length,
      events: d.events.map((e) => e.kind),
      reasons: d.reasons.slice(0, 20),
      moreReasons: Math.max(0, d.reasons.length - 20),
    },
    "campaign decision",
  );
}
