/**
 * I9: Control crashes, restarts, lease losses and database outages never change the outcome
 * of a seed. What is compared is what the scenario decides, not what timing decides: each
 * campaign's phase, code and batch states, and the version every agent ends on. Only calm
 * scenarios are compared (`Scenario.calm`: timing-free behaviours, no operator); the others,
 * whose outcome depends on timing by design (an operator's command at a given time, agents
 * that flap, go silent or return late), are held to the invariants alone.
 */
import type { RunResult } from "./run.js";

/** Where the faulty run's outcome differs from the clean one's, or undefined. */
export function outcomeDifference(clean: RunResult, faulty: RunResult): string | undefined {
  if (!clean.scenario.calm) return undefined;
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
