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
export const KNOWN_DEFECTS: Readonly<Record<number, KnownDefect>> = {};

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
