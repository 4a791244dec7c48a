/**
 * The campaign-level breaches, rule by rule on the pure engine: the failure budget over every
 * batch (`maxFailures`), the minimum sample (`minCanaries`) and a yanked target, each taking
 * on_breach with a code of its own while every batch is under its threshold.
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  goOffline,
  inState,
  nodeOf,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/** 20 nodes in batches of 5, 5 and 10, each batch breaching only above 50 %. */
function lenient(spec: Partial<CampaignSpecInput>): Harness {
  const h = start(fleet(20), {
    batches: [25, 50, 100].map((percent) => ({ percent, minDurationMs: 0 })),
    failureThresholdPercent: 50,
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
    ...spec,
  });
  tick(h);
  return h;
}

/** The current batch's first `fail` offered nodes refuse, the others come back on the target. */
function runBatch(h: Harness, fail: number): string[] {
  const ids = batchIds(h, h.campaign.currentBatch);
  const failed = ids.slice(0, fail);
  for (const id of failed) report(h, id, "REFUSED");
  bringBack(
    h,
    ids.filter((id) => !failed.includes(id)),
  );
  advance(h, 1_000);
  return failed;
}

describe("the failure budget over every batch (maxFailures)", () => {
  it("rolls back batch 3 when the campaign's third failure exceeds max failures 2, every batch under its threshold", () => {
    const h = lenient({ maxFailures: { kind: "count", count: 2 } });
    runBatch(h, 1);
    expect(h.campaign.currentBatch).toBe(1);
    runBatch(h, 1);
    expect(h.campaign.currentBatch).toBe(2);
    expect(h.campaign.phase).toBe("running");
    const [third] = runBatch(h, 1);
    expect(h.campaign).toMatchObject({
      phase: "rolling_back",
      code: "max_failures_exceeded",
      rollbackCause: "breach",
      stoppedByNodeId: third,
      message: "3 of 20 nodes of the campaign failed (max failures 2: 2 allowed)",
    });
    expect(h.last?.events).toContainEqual(
      expect.objectContaining({ kind: "breached", batch: 2, code: "max_failures_exceeded" }),
    );
    expect(h.campaign.batches[2]?.state).toBe("breached");
  });

  it("keeps its code once the rollback ended: rolled_back, max_failures_exceeded", () => {
    const h = lenient({ maxFailures: { kind: "count", count: 2 } });
    runBatch(h, 1);
    runBatch(h, 1);
    runBatch(h, 1);
    const rolling = inState(h, "rolling_back");
    expect(rolling.length).toBeGreaterThan(0);
    for (const id of rolling) {
      report(h, id, "REINSTATED", "rollback");
      bringBack(h, [id], "1.0.0");
    }
    advance(h, 1_000);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "max_failures_exceeded" });
  });

  it("passes every batch when the failures stay within the budget (2 of 20 at max failures 2)", () => {
    const h = lenient({ maxFailures: { kind: "count", count: 2 } });
    runBatch(h, 1);
    runBatch(h, 0);
    runBatch(h, 1);
    expect(h.campaign).toMatchObject({ phase: "completed", code: undefined });
  });

  it("counts a percentage of the campaign's nodes not skipped: 10 % of 20 allows 2, the third breaches", () => {
    const h = lenient({ maxFailures: { kind: "percent", percent: 10 }, onBreach: "stop" });
    runBatch(h, 2);
    expect(h.campaign.currentBatch).toBe(1);
    runBatch(h, 1);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "max_failures_exceeded" });
    expect(h.campaign.message).toBe(
      "3 of 20 nodes of the campaign failed (max failures 10%: 2 allowed)",
    );
  });

  it("max failures 0: the first failure takes on_breach, under a 50 % threshold", () => {
    const h = lenient({ maxFailures: { kind: "count", count: 0 }, onBreach: "pause" });
    runBatch(h, 1);
    expect(h.campaign).toMatchObject({ phase: "paused", code: "max_failures_exceeded" });
    expect(h.campaign.batches[0]?.state).toBe("breached");
  });

  it("a resume after a pause accepts the failures so far; one more failure in a later batch breaches again", () => {
    const h = lenient({ maxFailures: { kind: "count", count: 0 }, onBreach: "pause" });
    runBatch(h, 1);
    expect(h.campaign.phase).toBe("paused");
    tick(h, [{ kind: "resume" }]);
    advance(h, 1_000);
    expect(h.campaign).toMatchObject({ phase: "running", currentBatch: 1 });
    runBatch(h, 0);
    expect(h.campaign).toMatchObject({ phase: "running", currentBatch: 2 });
    runBatch(h, 1);
    expect(h.campaign).toMatchObject({ phase: "paused", code: "max_failures_exceeded" });
    expect(h.campaign.currentBatch).toBe(2);
  });

  it("offers nothing more once the budget is exceeded under on_breach=stop", () => {
    const h = start(fleet(20), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 100,
      concurrency: 2,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      maxFailures: { kind: "count", count: 1 },
      onBreach: "stop",
    });
    tick(h);
    expect(sent(h, "upgrade")).toHaveLength(2);
    for (const id of sent(h, "upgrade")) report(h, id, "REFUSED");
    advance(h, 1_000);
    expect(h.campaign.code).toBe("max_failures_exceeded");
    advance(h, 60_000);
    expect(sent(h, "upgrade")).toHaveLength(2);
  });
});

describe("the minimum sample (minCanaries)", () => {
  it("no batch passes before min canaries of its nodes settled after an offer: the short batch breaches instead", () => {
    // Batch 1 holds 5 nodes; 3 go offline before their offer and are skipped.
    const h = start(fleet(20), {
      batches: [25, 100].map((percent) => ({ percent, minDurationMs: 0 })),
      disruptionBudgetPercent: 100,
      concurrency: 2,
      configGraceMs: 0,
      minCanaries: 3,
    });
    const ids = batchIds(h, 0);
    expect(ids).toHaveLength(5);
    for (const id of ids.slice(2)) goOffline(h, id);
    tick(h);
    bringBack(h, ids.slice(0, 2));
    advance(h, 1_000);
    expect(ids.slice(2).map((id) => nodeOf(h, id).state)).toEqual([
      "skipped",
      "skipped",
      "skipped",
    ]);
    expect(h.campaign.batches[0]?.state).not.toBe("passed");
    expect(h.campaign).toMatchObject({ phase: "rolling_back", code: "min_canaries_unmet" });
    expect(h.campaign.message).toBe(
      "only 2 of the 3 nodes of batch 1 that min canaries asks for settled after an offer; the others were skipped",
    );
  });

  it("the same batch passes without min canaries (the rule, not the skips, holds it)", () => {
    const h = start(fleet(20), {
      batches: [25, 100].map((percent) => ({ percent, minDurationMs: 0 })),
      disruptionBudgetPercent: 100,
      concurrency: 2,
      configGraceMs: 0,
    });
    const ids = batchIds(h, 0);
    for (const id of ids.slice(2)) goOffline(h, id);
    tick(h);
    bringBack(h, ids.slice(0, 2));
    advance(h, 1_000);
    expect(h.campaign.batches[0]?.state).toBe("passed");
  });

  it("failures count toward the sample: 1 failed and 2 succeeded settle 3 of 3", () => {
    const h = start(fleet(20), {
      batches: [
        { percent: 15, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
      failureThresholdPercent: 50,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      minCanaries: 3,
    });
    tick(h);
    const ids = batchIds(h, 0);
    expect(ids).toHaveLength(3);
    report(h, ids[0] as string, "REFUSED");
    bringBack(h, ids.slice(1));
    advance(h, 1_000);
    expect(h.campaign.batches[0]?.state).toBe("passed");
  });

  it("nodes already on the target do not count toward the sample, and do not shrink what is asked", () => {
    // 10 nodes, the first batch widened to hold 3 nodes to upgrade past 2 already current.
    const h = start(fleet(10, { version: (i) => (i < 2 ? "2.0.0" : "1.0.0") }), {
      batches: [
        { percent: 10, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      minCanaries: 3,
    });
    const first = batchIds(h, 0);
    const toUpgrade = first.filter((id) => !["node-000", "node-001"].includes(id));
    expect(toUpgrade).toHaveLength(3);
    tick(h);
    expect(sent(h, "upgrade").sort()).toEqual([...toUpgrade].sort());
  });
});

describe("a yanked target", () => {
  it("offers nothing more and rolls back the running batch, code release_yanked, when on_breach is rollback", () => {
    const h = start(fleet(20), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 4,
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
    });
    tick(h);
    const offered = sent(h, "upgrade");
    expect(offered).toHaveLength(4);
    h.now += 1_000;
    tick(h, [], { yanked: { reason: "corrupts the cache" } });
    expect(h.campaign).toMatchObject({ phase: "rolling_back", code: "release_yanked" });
    expect(h.campaign.message).toBe("release 2.0.0 was yanked: corrupts the cache");
    expect(sent(h, "rollback").sort()).toEqual([...offered].sort());
    expect(sent(h, "upgrade")).toHaveLength(4);
    expect(inState(h, "canceled")).toHaveLength(16);
  });

  it("never passes a settled batch of a yanked target, nor confirms it, under on_breach=pause", () => {
    const h = start(fleet(4), {
      batches: [
        { percent: 50, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      onBreach: "pause",
    });
    tick(h);
    bringBack(h, batchIds(h, 0));
    h.now += 1_000;
    tick(h, [], { yanked: { reason: "bad" } });
    expect(h.campaign).toMatchObject({ phase: "paused", code: "release_yanked" });
    expect(sent(h, "confirm")).toEqual([]);
    h.now += 1_000;
    tick(h, [{ kind: "resume" }], { yanked: { reason: "bad" } });
    expect(h.campaign).toMatchObject({ phase: "paused", code: "release_yanked", currentBatch: 0 });
    expect(sent(h, "confirm")).toEqual([]);
    expect(sent(h, "upgrade")).toHaveLength(2);
  });
});
