/**
 * I9: Control crashes, restarts, lease losses and database outages never change the outcome
 * of a seed. What is compared is what the scenario decides, not what timing decides: each
 * campaign's phase, code and batch states, and the version every agent of a passed or rolled
 * back batch ends on (which nodes of a batch that breached and stopped or paused were offered
 * before the breach was known depends on when slots freed up), except agents that are busy for
 * a while (they answer DEFERRED until a set time): whether such a node is offered again after
 * its busy spell or runs out its max defer first depends on when Control judged its first
 * deferral, which a Control that was down does later. A run in which the simulated operator
 * resumed a paused campaign is not compared either: a resume accepts the failures known then,
 * and which nodes had been offered (and had failed) before the breach was known depends on when
 * slots freed up, which faults move. Only calm
 * scenarios are compared (`Scenario.calm`: timing-free behaviours, no operator); the others,
 * whose outcome depends on timing by design (an operator's command at a given time, agents
 * that flap, go silent or return late), are held to the invariants alone.
 */
import type { RunResult } from "./run.js";

/** Where the faulty run's outcome differs from the clean one's, or undefined. */
export function outcomeDifference(clean: RunResult, faulty: RunResult): string | undefined {
  if (!clean.scenario.calm || clean.resumed || faulty.resumed) return undefined;
  for (const [id, c] of Object.entries(clean.outcome.campaigns)) {
    const f = faulty.outcome.campaigns[id];
    const a = JSON.stringify(c);
    const b = JSON.stringify(f);
    if (a !== b) return `campaign ${id} ended ${a} without faults but ${b} with them`;
  }
  const busy = new Set(
    clean.scenario.agents.filter((a) => a.busyUntil !== undefined).map((a) => a.id),
  );
  for (const [id, v] of Object.entries(clean.outcome.nodes)) {
    if (busy.has(id)) continue;
    // Which nodes of a breached batch were offered before the breach was known depends on
    // when slots freed up; a passed or rolled-back batch decides where each node ends.
    if (v.batch !== "passed" && v.batch !== "rolled_back") continue;
    const f = faulty.outcome.nodes[id];
    if (v.version !== f?.version)
      return `${id} (batch ${v.batch}) ends on ${v.version} without faults but on ${f?.version} with them`;
  }
  return undefined;
}
