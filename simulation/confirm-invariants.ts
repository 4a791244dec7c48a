/**
 * C1, judged from the agents' ground truth after every step: an agent's confirmed floor is
 * always the floor it started with, or the sequence of a release it ran (as it verified it)
 * and received a confirm for, naming that release's version and that sequence. A floor raised
 * by a confirm of another sequence (the forged-confirm attack), or to a release it never ran,
 * breaks it. The record is the agents' own (`ground-truth.ts`), never Control's tables.
 */
import type { SimAgent } from "./agent-script.js";

/** The violation of C1 by `agent` now, or undefined. */
export function confirmFloorViolation(id: string, agent: SimAgent): string | undefined {
  const floor = agent.confirmedSequence;
  if (floor === agent.confirmedHistory[0]) return undefined;
  const r = agent.record;
  const ran = r.runs.filter((run) => run.sequence === floor).map((run) => run.version);
  const confirmed = r.received.some(
    (op) => op.kind === "confirm" && op.sequence === floor && ran.includes(op.version),
  );
  if (confirmed) return undefined;
  return ran.length === 0
    ? `C1: ${id}'s confirmed sequence ${floor} is the sequence of no release it ran`
    : `C1: ${id}'s confirmed sequence ${floor} was never confirmed on the release it ran at that sequence`;
}

/**
 * C1 over every agent whose floor moved since the last call (`floors` remembers each agent's
 * floor as last judged), so a step costs one comparison per agent.
 */
export function confirmFloorViolations(
  agents: ReadonlyMap<string, SimAgent>,
  floors: Map<string, number>,
): string[] {
  const out: string[] = [];
  for (const [id, agent] of agents) {
    if (floors.get(id) === agent.confirmedSequence) continue;
    floors.set(id, agent.confirmedSequence);
    const v = confirmFloorViolation(id, agent);
    if (v !== undefined) out.push(v);
  }
  return out;
}
