import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { isBreached } from "../../../control/campaign/batch-rules.js";
import {
  BatchState,
  BatchStatusSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { thresholdStanding, thresholdText } from "../../../ui/threshold.js";

describe("the dashboard's threshold gauge", () => {
  it("calls a batch breached exactly when the engine does, and counts the failures left", () => {
    for (const threshold of [0, 1, 5, 10, 20, 50, 100]) {
      for (const offerable of [0, 1, 2, 9, 10, 20, 100, 101]) {
        for (let failed = 0; failed <= offerable; failed++) {
          const batch = create(BatchStatusSchema, { failed, offerable });
          const standing = thresholdStanding(batch, threshold);
          const engine = isBreached({ failed, offerable }, threshold, 0);
          expect({ threshold, offerable, failed, breached: standing.breached }).toEqual({
            threshold,
            offerable,
            failed,
            breached: engine,
          });
          if (!engine) {
            // `left` more failures breach it, one fewer does not.
            const more = { failed: failed + standing.left, offerable };
            const fewer = { failed: failed + standing.left - 1, offerable };
            if (more.failed <= offerable) expect(isBreached(more, threshold, 0)).toBe(true);
            expect(isBreached(fewer, threshold, 0)).toBe(false);
          }
        }
      }
    }
  });

  it("words 1 of 10 failed at a 20 % threshold", () => {
    const standing = thresholdStanding(create(BatchStatusSchema, { failed: 1, offerable: 10 }), 20);
    expect(standing).toEqual({ ratio: 10, allowed: 2, breached: false, left: 2 });
  });

  it("counts the failures an operator accepted by resuming, as the engine does", () => {
    for (const threshold of [0, 5, 10, 50]) {
      for (const offerable of [1, 10, 74]) {
        for (let accepted = 0; accepted <= offerable; accepted += 3) {
          for (let failed = 0; failed <= offerable; failed++) {
            const batch = create(BatchStatusSchema, {
              failed,
              offerable,
              acceptedFailures: accepted,
            });
            const standing = thresholdStanding(batch, threshold);
            const engine = isBreached({ failed, offerable }, threshold, accepted);
            expect({ threshold, offerable, accepted, failed, breached: standing.breached }).toEqual(
              {
                threshold,
                offerable,
                accepted,
                failed,
                breached: engine,
              },
            );
            if (!engine) {
              const more = { failed: failed + standing.left, offerable };
              const fewer = { failed: failed + standing.left - 1, offerable };
              if (more.failed <= offerable)
                expect(isBreached(more, threshold, accepted)).toBe(true);
              expect(isBreached(fewer, threshold, accepted)).toBe(false);
            }
          }
        }
      }
    }
  });
});

describe("the threshold gauge's words", () => {
  const batch = (state: BatchState, failed: number, offerable: number, acceptedFailures = 0) =>
    create(BatchStatusSchema, { state, failed, offerable, acceptedFailures });

  it("a running batch: how many more failures breach it", () => {
    expect(thresholdText(batch(BatchState.RUNNING, 1, 10), 20)).toBe(
      "1 of 10 failed (10.0%), threshold 20%: 2 more failures breach it",
    );
  });

  it("a passed batch says it passed, never how many more failures breach it", () => {
    expect(thresholdText(batch(BatchState.PASSED, 1, 10), 20)).toBe(
      "1 of 10 failed (10.0%), threshold 20%: passed",
    );
  });

  it("a batch resumed after its breach says the failures accepted at resume, running or passed", () => {
    expect(thresholdText(batch(BatchState.PASSED, 13, 74, 13), 10)).toBe(
      "13 of 74 failed (17.6%), over the 10% threshold: passed after resume (13 accepted at resume)",
    );
    expect(thresholdText(batch(BatchState.RUNNING, 13, 74, 13), 10)).toBe(
      "13 of 74 failed (17.6%), over the 10% threshold: 13 accepted at resume, 1 more failure breaches it",
    );
  });

  it("a breached batch says it is over the threshold", () => {
    expect(thresholdText(batch(BatchState.ROLLED_BACK, 2, 10), 10)).toBe(
      "2 of 10 failed (20.0%): over the 10% threshold",
    );
  });
});
