/**
 * Properties of the campaign engine over random scenarios: every invariant holds at every
 * decision, and no pool is pushed over its budget by the nodes other campaigns have in flight.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import type { PoolLoad } from "../../../control/campaign/index.js";
import { runChecked } from "./checked-run.js";
import { MIN } from "./harness.js";
import { PROPERTY_RUNS, scenarioArb } from "./scenario-arbitraries.js";
import type { Scenario } from "./sim.js";

describe("campaign engine properties", () => {
  it("keeps every invariant over random fleets, behaviours and admin actions", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        runChecked(scenario);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("never pushes a pool over its budget, counting the nodes other campaigns have in flight", () => {
    const withPools = scenarioArb.chain((s) =>
      fc
        .record({
          extra: fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 3, maxLength: 3 }),
          elsewhere: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 3, maxLength: 3 }),
          freeAt: fc.option(fc.integer({ min: 0, max: 90 * MIN }), { nil: undefined }),
        })
        .map(({ extra, elsewhere, freeAt }): Scenario => {
          const pools = new Map<string, PoolLoad>(
            ["", "a", "b"].map((pool, i) => [
              pool,
              {
                size: s.nodes.filter((n) => n.pool === pool).length + extra[i]!,
                inFlightElsewhere: elsewhere[i]!,
              },
            ]),
          );
          // The others' nodes finish some day (else a full pool could only wait forever).
          return { ...s, pools, poolsFreeAt: freeAt ?? 30 * MIN };
        }),
    );
    fc.assert(
      fc.property(withPools, (scenario) => {
        runChecked(scenario);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
