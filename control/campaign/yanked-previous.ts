/**
 * The nodes of a plan that a breach would not roll back: their current release (what the
 * campaign records as their previous version) is yanked, and a rollback never reinstalls a
 * yanked release (`rollback.ts`, rollback_withheld). `campaign plan` and `campaign start` count
 * them so the operator knows before starting.
 */
import type { Plan } from "./plan.js";

/**
 * The ids, in canary order, of the plan's nodes that will be offered the upgrade (neither
 * already on the target nor skipped) whose current version is among `yanked`.
 */
export function yankedPreviousNodeIds(
  plan: Plan,
  versionOf: (nodeId: string) => string | undefined,
  yanked: ReadonlySet<string> | ReadonlyMap<string, unknown>,
): string[] {
  if (yanked.size === 0) return [];
  const notOffered = new Set<string>(plan.upToDateNodeIds);
  for (const skip of plan.skips) for (const id of skip.nodeIds) notOffered.add(id);
  const out: string[] = [];
  for (const n of plan.nodes) {
    if (notOffered.has(n.nodeId)) continue;
    const version = versionOf(n.nodeId);
    if (version !== undefined && yanked.has(version)) out.push(n.nodeId);
  }
  return out;
}
