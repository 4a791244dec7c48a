/**
 * The engine's batch arithmetic against the reference models of `simulation/reference/`, over
 * random inputs: batch sizes from cumulative percentages, ramp step sizes, the failure
 * threshold, pool budgets and the nodes in flight.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  batchBounds,
  type CampaignNode,
  countBatch,
  inFlight,
  isBreached,
  NODE_STATES,
  poolLimit,
  rampSizes,
  rampStepLimit,
} from "../../control/campaign/index.js";
import { refBatchSizes } from "../../simulation/reference/batches.js";
import { refInFlight, refPoolLimit } from "../../simulation/reference/pools.js";
import { type RefRamp, refRampSizes, refStepLimit } from "../../simulation/reference/ramp.js";
import { refBreached, refCount } from "../../simulation/reference/threshold.js";

/** Strictly increasing whole percentages ending at 100 (1 to 10 batches). */
const percentsArb = fc
  .uniqueArray(fc.integer({ min: 1, max: 99 }), { maxLength: 9 })
  .map((xs) => [...xs.sort((a, b) => a - b), 100]);

/** A ramp with an exact rate: per second, per minute or per hour, a factor of hundredths. */
const rampArb = fc
  .record({
    count: fc.integer({ min: 1, max: 60 }),
    per: fc.constantFrom(1 / 60, 1, 60),
    factor: fc.constantFrom(100, 101, 110, 125, 150, 175, 200, 250, 300),
    max: fc.constantFrom(0, 5, 30, 100, 1000),
    stepMinutes: fc.integer({ min: 1, max: 120 }),
  })
  .map(({ count, per, factor, max, stepMinutes }) => {
    const ref: RefRamp = {
      startNumerator: per === 60 ? count * 60 : count,
      startDenominator: per === 1 / 60 ? 60 : 1,
      factorNumerator: factor,
      factorDenominator: 100,
      maxNumerator: max === 0 ? 0 : Math.max(max, Math.ceil(count * per)),
      maxDenominator: 1,
      stepMs: stepMinutes * 60_000,
    };
    const engine = {
      startPerMinute: count * per,
      factor: factor / 100,
      maxPerMinute: ref.maxNumerator,
      stepMs: ref.stepMs,
    };
    return { ref, engine };
  });

const nodeArb = fc
  .record({
    state: fc.constantFrom(...NODE_STATES),
    grace: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
  })
  .map(({ state, grace }) => ({ state, graceEndsAt: grace }) as unknown as CampaignNode);

describe("batch arithmetic against the reference models", () => {
  it("batch sizes from cumulative percentages, rounded up", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), percentsArb, (total, percents) => {
        const bounds = batchBounds(
          total,
          percents.map((percent) => ({ percent, minDurationMs: 0 })),
        );
        const sizes = bounds.map((end, i) => end - (i === 0 ? 0 : (bounds[i - 1] as number)));
        expect(sizes).toEqual(refBatchSizes(total, percents));
      }),
      { numRuns: 300 },
    );
  });

  it("ramp step limits, exactly", () => {
    fc.assert(
      fc.property(rampArb, fc.integer({ min: 0, max: 40 }), ({ ref, engine }, step) => {
        // Past a billion nodes a step's size means nothing, and a double no longer holds it exactly.
        fc.pre(refStepLimit(ref, step) <= 1e9);
        expect(rampStepLimit(engine, step)).toBe(refStepLimit(ref, step));
      }),
      { numRuns: 500 },
    );
  });

  it("ramp step sizes over a fleet, the canary cap of the first step included", () => {
    fc.assert(
      fc.property(
        rampArb,
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 1, max: 100 }),
        ({ ref, engine }, total, firstMax) => {
          expect(rampSizes(total, engine, firstMax)).toEqual(refRampSizes(total, ref, firstMax));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the failure threshold: a brute-force recount of the batch", () => {
    fc.assert(
      fc.property(
        fc.array(nodeArb, { maxLength: 300 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 40 }),
        (nodes, threshold, accepted) => {
          const ref = refCount(nodes.map((n) => n.state));
          expect(countBatch(nodes)).toEqual(ref);
          expect(isBreached(countBatch(nodes), threshold, accepted)).toBe(
            refBreached(ref.failed, ref.offerable, threshold, accepted),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("pool budgets and the nodes in flight", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100 }),
        nodeArb,
        fc.integer({ min: 0, max: 1000 }),
        (size, budget, node, now) => {
          expect(poolLimit(size, budget)).toBe(refPoolLimit(size, budget));
          expect(inFlight(node, now)).toBe(refInFlight(node, now));
        },
      ),
      { numRuns: 500 },
    );
  });
});
