/**
 * Runs a range of seeds of the deterministic simulation as vitest cases: each seed once
 * without faults and once with Control crashes, lease losses and database outages, checking
 * every invariant at every step and that the faults did not change the outcome (I9). A
 * failing seed's message is the report `npm run simulate` prints, with its replay command.
 */
import { expect, it } from "vitest";
import { checkSeed } from "../../simulation/check-seed.js";
import { knownSeedDefect } from "./known-defects.js";

/** Seeds per vitest case. */
const CHUNK = 15;
/**
 * A case's time limit: 15 seeds take 10–50 s on an idle two-core machine, and a chunk with
 * daylight-saving days (`simulation/dst-days.ts`: windows in a zone with offsets cost the engine
 * several seconds a seed) past 60 s when the machine is loaded.
 */
const CASE_TIMEOUT_MS = 180_000;

/**
 * Declares cases over seeds `first`…`first + count - 1`; after the last one, checks that at
 * least `minCampaigns` campaigns were run in all.
 */
export function seedCases(first: number, count: number, minCampaigns: number): void {
  let campaigns = 0;
  for (let from = first; from < first + count; from += CHUNK) {
    const to = Math.min(first + count, from + CHUNK) - 1;
    it(
      `holds every invariant for seeds ${from}…${to}, with and without faults`,
      async () => {
        for (let seed = from; seed <= to; seed++) {
          const checked = await checkSeed(seed, { faults: true });
          campaigns += checked.campaigns;
          const known = knownSeedDefect(seed);
          if (known === undefined) {
            if (checked.failure !== undefined) expect.fail(checked.failure);
            continue;
          }
          // A seed listed under a known defect must still break its invariant: once the defect
          // is fixed it holds, and its entry in known-defects.ts is deleted.
          expect(
            checked.failure,
            `seed ${seed} now holds: delete it from defect ${known.defect} in known-defects.ts`,
          ).toContain(known.invariant);
        }
      },
      CASE_TIMEOUT_MS,
    );
  }
  it(`ran at least ${minCampaigns} campaigns`, () => {
    expect(campaigns).toBeGreaterThanOrEqual(minCampaigns);
  });
}
