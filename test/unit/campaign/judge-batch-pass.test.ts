/**
 * What a passing batch records: the events and reasons of the pass and of the next batch's
 * start, the confirms it sends (to its verifying nodes and to those already on the target,
 * never to a node that failed), and gate evidence only where the campaign has gates.
 */
import { describe, expect, it } from "vitest";
import { batchIds, bringBack, fleet, nodeOf, report, sent, start, tick } from "./harness.js";

const TWO_BATCHES = {
  batches: [
    { percent: 50, minDurationMs: 0 },
    { percent: 100, minDurationMs: 0 },
  ],
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
};

describe("a batch that passes", () => {
  it("says batch_passed and batch_started for the next one, with the reason", () => {
    const h = start(fleet(4), TWO_BATCHES);
    tick(h);
    bringBack(h, batchIds(h, 0));
    const d = tick(h);
    expect(h.campaign.currentBatch).toBe(1);
    expect(d.events).toContainEqual({ kind: "batch_passed", batch: 0 });
    expect(d.events).toContainEqual({ kind: "batch_started", batch: 1 });
    expect(d.reasons).toContain("campaign: batch 1 passed; batch 2 starts");
    expect(h.campaign.batches[1]).toMatchObject({ state: "running", startedAt: h.now });
  });

  it("confirms a node already on the target once, and never a node that failed", () => {
    const h = start(fleet(6, { version: (i) => (i === 0 ? "2.0.0" : "1.0.0") }), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 50,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
    });
    tick(h);
    expect(nodeOf(h, "node-000")).toMatchObject({ state: "succeeded", code: "already_current" });
    const offered = batchIds(h, 0).filter((id) => id !== "node-000");
    const [refusing, ...rest] = offered as [string, ...string[]];
    report(h, refusing, "REFUSED");
    bringBack(h, rest);
    const d = tick(h);
    expect(h.campaign.phase).toBe("completed");
    const confirmed = sent(h, "confirm");
    expect(confirmed.filter((id) => id === "node-000")).toHaveLength(1);
    expect(confirmed).not.toContain(refusing);
    expect([...confirmed].sort()).toEqual(["node-000", ...rest].sort());
    expect(d.reasons).toContain("node node-000: succeeded (final): batch passed; confirmed");
    expect(nodeOf(h, "node-000").confirmOperationId).toBeDefined();
  });

  it("records no gate evidence in a campaign without gates", () => {
    const h = start(fleet(4), TWO_BATCHES);
    tick(h);
    bringBack(h, batchIds(h, 0));
    tick(h);
    expect(h.campaign.batches[0]?.state).toBe("passed");
    expect(h.campaign.batches[0]?.gateEvidence).toBeUndefined();
  });
});
