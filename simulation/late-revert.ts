/**
 * The `late_revert` behaviour: an agent that took its upgrade and came back on the target
 * reverts to its previous release by itself {@link LATE_REVERT_AFTER_MS} later (as a real
 * Agent's own health watchdog would), once: it starts to run the previous release and
 * restarts on it, so it comes back with a new boot on the old version. Its ground-truth record
 * holds the run of the old version from the moment it reverted, whether or not Control was up
 * to see it.
 */
import { runVersion } from "./agent-procedures.js";
import type { SimAgent } from "./agent-script.js";

/** How long after coming back on the target a `late_revert` agent reverts. */
export const LATE_REVERT_AFTER_MS = 40_000;

/** What the revert needs of the fleet around the agent. */
export interface LateRevertHost {
  now(): number;
  later(a: SimAgent, ms: number, run: () => void): void;
  restart(a: SimAgent, ms: number): void;
}

/**
 * Called when agent `a` is welcomed on a stream: a `late_revert` agent that runs a release it
 * was upgraded to (it has a previous one) and has not reverted yet schedules its revert, and
 * `scheduled` is told when it will happen. Nothing for any other agent.
 */
export function scheduleLateRevert(
  host: LateRevertHost,
  a: SimAgent,
  scheduled: (at: number) => void,
): void {
  if (a.script.behaviour !== "late_revert" || a.lateReverted || a.previousVersion === "") return;
  a.lateReverted = true;
  scheduled(host.now() + LATE_REVERT_AFTER_MS);
  host.later(a, LATE_REVERT_AFTER_MS, () => {
    const back = a.previousVersion;
    // Back on what it ran before, it has no previous release to reinstate.
    a.previousVersion = "";
    runVersion(host, a, back, a.sequences.get(back));
    host.restart(a, a.script.restartMs);
  });
}
