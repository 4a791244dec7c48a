import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { isBreached } from "../../../control/campaign/batch-rules.js";
import { BatchStatusSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { thresholdStanding } from "../../../ui/threshold.js";

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
});
