/**
 * Runs a range of seeds of the deterministic simulation as vitest cases: each seed once
 * without faults and once with Control crashes, lease losses and database outages, checking
 * every invariant at every step and that the faults did not change the outcome (I9). A
 * failing seed's message is the report `npm run simulate` prints, with its replay command.
 */
import { expect, it } from "vitest";
import { outcomeDifference } from "../../simulation/compare.js";
import { type RunResult, runSeed } from "../../simulation/run.js";

/** Seeds per vitest case (one case stays well under the test timeout). */
const CHUNK = 25;

function failure(r: RunResult, what: string): string {
  return [
    `seed ${r.seed} (${what}) broke an invariant at step ${r.violation?.step}: ${r.violation?.message}`,
    ...r.trace,
    `replay: npm run simulate -- --seed ${r.seed} --campaigns 1 --trace`,
  ].join("\n");
}

/**
 * Declares cases over seeds `first`…`first + count - 1`; after the last one, checks that at
 * least `minCampaigns` campaigns were run in all.
 */
export function seedCases(first: number, count: number, minCampaigns: number): void {
  let campaigns = 0;
  for (let from = first; from < first + count; from += CHUNK) {
    const to = Math.min(first + count, from + CHUNK) - 1;
    it(`holds every invariant for seeds ${from}…${to}, with and without faults`, async () => {
      for (let seed = from; seed <= to; seed++) {
        const clean = await runSeed(seed, { faults: false });
        if (clean.violation) expect.fail(failure(clean, "no faults"));
        const faulty = await runSeed(seed, { faults: true });
        if (faulty.violation) expect.fail(failure(faulty, "with faults"));
        const difference = outcomeDifference(clean, faulty);
        if (difference !== undefined) expect.fail(`seed ${seed}: I9: ${difference}`);
        campaigns += clean.campaigns + faulty.campaigns;
      }
    });
  }
  it(`ran at least ${minCampaigns} campaigns`, () => {
    expect(campaigns).toBeGreaterThanOrEqual(minCampaigns);
  });
}
