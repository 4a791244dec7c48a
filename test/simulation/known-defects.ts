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
      "a rollback delivered late (re-sent when an agent that was away reconnects) is judged unconfirmed a reconnect timeout after it was first sent or after the Control that took over became ready, not after it was delivered: the node's slot is freed (its rollbackResult recorded, or it is rollback_failed) while its agent restarts onto its previous release, and another campaign offers in the pool over its budget (PD1, the late-rollback scenario; seeds 41, 175, 581 and 514232 with faults, 2026-12-07; 175 failed before defect 32's fix too, with a node rolling back). Not fixed: docs/decisions.md, \"A final node sent its campaign's rollback holds a slot until its outcome is recorded\", What is left.",
    seeds: [41, 175, 581, 514232],
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
