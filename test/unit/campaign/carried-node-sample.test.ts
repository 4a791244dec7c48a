/**
 * A deferring node carried into the next batch never raises the sample (`--min-canaries`) that
 * batch must have: the batch asks what it asked without it, and the carried node counts in its
 * sample only once it settles there. Otherwise a carried node that stays busy past its max defer
 * made a small batch short of its sample (`min_canaries_unmet`), where left in its own batch it
 * would have been skipped and that batch passed: a busy node never turns a pass into a breach.
 */
import { describe, expect, it } from "vitest";
import type { Harness } from "./harness.js";
import {
  batchIds,
  bringBack,
  fleet,
  inState,
  MIN,
  NEW,
  nodeOf,
  report,
  start,
  tick,
} from "./harness.js";

const busy = { code: "deferred", message: "the update lock /run/lock held" };

/** Decides and answers: `busyNode` answers every offer DEFERRED, the others restart into the target. */
function runTo(h: Harness, until: number, busyNode: string): void {
  for (; h.now <= until; h.now += 10_000) {
    tick(h);
    const offered = inState(h, "offered");
    for (const id of offered) {
      if (id === busyNode) report(h, id, "DEFERRED", "upgrade", busy);
      else {
        report(h, id, "RESTARTING");
        bringBack(h, [id], NEW);
      }
    }
    if (offered.length > 0) tick(h);
  }
}

describe("a deferring node carried into a batch smaller than the minimum sample", () => {
  it("stays busy past its max defer there: skipped deferred, and the batch passes on its own node", () => {
    const h = start(fleet(10), {
      batches: [
        { percent: 20, minDurationMs: 10 * MIN },
        { percent: 90, minDurationMs: 10 * MIN },
        { percent: 100, minDurationMs: 10 * MIN },
      ],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      maxDeferMs: 60 * MIN,
      minCanaries: 2,
    });
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([2, 7, 1]);
    const busyNode = batchIds(h, 1)[0] as string;
    runTo(h, 25 * MIN, busyNode);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 2, carriedFrom: 1, state: "waiting" });
    runTo(h, 120 * MIN, busyNode);
    expect(nodeOf(h, busyNode)).toMatchObject({ state: "skipped", code: "deferred" });
    expect({ phase: h.campaign.phase, code: h.campaign.code }).toEqual({
      phase: "completed",
      code: undefined,
    });
  });
});
