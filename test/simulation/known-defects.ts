/**
 * Checks that are known to fail today because of a listed engine defect, in one place, keyed
 * by the defect's number in the safety work (1–15; 16 on is what the oracle found since). A
 * listed case is run and must still FAIL: once the defect is fixed it passes, its test turns
 * red, and its entry is deleted here. Nothing else may be skipped.
 */

/** A known defect: what it is, and the cases that show it. */
export interface KnownDefect {
  readonly title: string;
  /** Simulation seeds (`npm test`'s share) that break an invariant because of it. */
  readonly seeds: readonly number[];
  /** The invariant those seeds break (the start of its message, e.g. "O1:"). */
  readonly invariant?: string;
  /** Named cases of the reference-model property tests that disagree because of it. */
  readonly cases: readonly string[];
}

/** The known defects, by number. */
export const KNOWN_DEFECTS: Readonly<Record<number, KnownDefect>> = {
  33: {
    title:
      "an agent that reports FAILED apply_failed yet runs the target, and restarts into it at once, is failed and the batch rolled back and finished before its Hello on the target arrives: the campaign says rolled_back while the node runs the target, never sent a rollback (O1/I2, the generator's fail_on_target agents, seeds 262 and 398, 2026-12-07). The engine judges by what the agent says; a rollback that waited for every failed node to be seen again would hold every rollback. Not fixed.",
    seeds: [262, 398],
    invariant: "O1:",
    cases: [],
  },
  34: {
    title:
      "a rollback the outbox re-sends after its campaign finished (judged rollback_unconfirmed while its agent was away; a rollback is re-sent until the agent reports on it) restarts that agent onto its previous release outside every budget: a finished campaign holds no slot, and another campaign offers in the pool over its budget (PD1, the late-rollback scenario, seed 175 with faults, 2026-12-07). A rollback re-sent while its campaign still rolls back now counts its deadline from the agent's restart (rollback-from-restart.test.ts; seeds 41, 581, 514232 hold). Not fixed: choose between no re-send once the outcome is recorded, or a late rollback admitted under its pool's budget.",
    seeds: [175],
    invariant: "PD1:",
    cases: [],
  },
};

/** The defect a seed is known to fail by, if any. */
export function knownSeedDefect(seed: number): { defect: number; invariant: string } | undefined {
  for (const [n, d] of Object.entries(KNOWN_DEFECTS))
    if (d.seeds.includes(seed)) return { defect: Number(n), invariant: d.invariant ?? "" };
  return undefined;
}

/** Whether a named reference case is known to disagree (and which defect makes it). */
export function knownCaseDefect(name: string): number | undefined {
  for (const [n, d] of Object.entries(KNOWN_DEFECTS)) if (d.cases.includes(name)) return Number(n);
  return undefined;
}
