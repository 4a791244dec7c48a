/**
 * I9: Control crashes, restarts, lease losses and database outages never change the outcome
 * of a seed. What is compared is what the scenario decides, not what timing decides: each
 * campaign's phase, code and batch states, and the version every agent ends on. Scenarios
 * whose outcome depends on timing by design (an operator's command at a given time, agents
 * that flap, go silent or return late, nodes that connect only after a campaign started) are
 * compared on the invariants alone.
 */
import type { RunResult } from "./run.js";

/** True when the outcome of the scenario does not depend on when things happen. */
export function timingFree(r: RunResult): boolean {
  const s = r.scenario;
  if (s.operator.length > 0) return false;
  const firstStart = Math.min(...s.campaigns.map((c) => c.at));
  return s.agents.every(
    (a) =>
      a.behaviour !== "flap" &&
      a.behaviour !== "silent" &&
      a.behaviour !== "late_return" &&
      a.behaviour !== "never_return" &&
      a.onlineAt < firstStart,
  );
}

/** Where the faulty run's outcome differs from the clean one's, or undefined. */
export function outcomeDifference(clean: RunResult, faulty: RunResult): string | undefined {
  if (!timingFree(clean)) return undefined;
  for (const [id, c] of Object.entries(clean.outcome.campaigns)) {
    const f = faulty.outcome.campaigns[id];
    const a = JSON.stringify(c);
    const b = JSON.stringify(f);
    if (a !== b) return `campaign ${id} ended ${a} without faults but ${b} with them`;
  }
  for (const [id, v] of Object.entries(clean.outcome.nodes)) {
    const f = faulty.outcome.nodes[id];
    if (v !== f) return `${id} ends on ${v} without faults but on ${f} with them`;
  }
  return undefined;
}
