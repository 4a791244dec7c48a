/**
 * Comparing an incrementally judged decision with the full one of the same input (the
 * simulation's check, `DecisionDeps.compareFullJudging`).
 */
import type { Decision } from "../campaign/index.js";

/** Where two decisions of one input differ (the first differing field), or undefined. */
export function decisionDifference(incremental: Decision, full: Decision): string | undefined {
  for (const key of Object.keys(full) as (keyof Decision)[]) {
    const a = JSON.stringify(incremental[key]);
    const b = JSON.stringify(full[key]);
    if (a !== b) return `${key}: incremental ${a.slice(0, 400)} ≠ full ${b.slice(0, 400)}`;
  }
  return undefined;
}
