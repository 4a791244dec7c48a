import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { elapsedMs, planRetry } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  goOffline,
  inState,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

const HALF_HOUR = 30 * MIN;

/** 200 nodes: batch 1 = 10 nodes, batch 2 = 100 nodes, batch 3 = 90 nodes. */
function atBatchTwo(spec: Partial<CampaignSpecInput> = {}): Harness {
  const h = start(fleet(200), {
    batches: [5, 55, 100].map((percent) => ({ percent, minDurationMs: HALF_HOUR })),
    disruptionBudgetPercent: 100,
    ...spec,
  });
  tick(h);
  bringBack(h, batchIds(h, 0));
  advance(h, HALF_HOUR);
  expect(h.campaign.currentBatch).toBe(1);
  expect(inState(h, "offered")).toEqual(batchIds(h, 1));
  return h;
}

function failFirst(h: Harness, count: number): string[] {
  const ids = batchIds(h, 1).slice(0, count);
  for (const id of ids) report(h, id, "REFUSED");
  tick(h);
  return ids;
}

describe("threshold and rollback", () => {
  it("rolls back batch 2 when 6 of 100 offered nodes fail", () => {
    const h = atBatchTwo();
    const failed = failFirst(h, 6);
    expect(h.campaign).toMatchObject({
      phase: "rolling_back",
      code: "batch_failed",
      rollbackCause: "breach",
    });
    expect(h.campaign.message).toBe("6 of 100 nodes of batch 2 failed (threshold 5 %)");
    const rolling = batchIds(h, 1).filter((id) => !failed.includes(id));
    expect(sent(h, "rollback").sort()).toEqual(rolling.sort());
    expect(inState(h, "rolling_back")).toHaveLength(94);
    expect(batchIds(h, 0).every((id) => nodeOf(h, id).state === "succeeded")).toBe(true);
    expect(batchIds(h, 2).every((id) => nodeOf(h, id).state === "canceled")).toBe(true);
    expect(h.campaign.batches.map((b) => b.state)).toEqual(["passed", "breached", "canceled"]);
  });

  it("does not roll back when 5 of 100 fail at 5 %", () => {
    const h = atBatchTwo();
    failFirst(h, 5);
    expect(h.campaign.phase).toBe("running");
    expect(sent(h, "rollback")).toEqual([]);
  });

  it("counts nodes already on the target in the threshold's denominator (offerable = not skipped)", () => {
    const h = start(fleet(20, { version: (i) => (i % 2 === 0 ? NEW : OLD) }), {
      batches: [{ percent: 100, minDurationMs: HALF_HOUR }],
      disruptionBudgetPercent: 100,
    });
    tick(h);
    const current = h.nodes.filter((n) => n.code === "already_current").map((n) => n.nodeId);
    expect(current).toHaveLength(10);
    const offered = inState(h, "offered");
    expect(offered).toHaveLength(10);
    report(h, offered[0]!, "REFUSED");
    tick(h);
    // 1 of 20 is 5 %: no breach (1 of the 10 offered would be 10 %).
    expect(h.campaign.phase).toBe("running");
    report(h, offered[1]!, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.message).toBe("2 of 20 nodes of batch 1 failed (threshold 5 %)");
  });

  it("records the node whose failure breached the batch", () => {
    const h = atBatchTwo();
    const ids = batchIds(h, 1);
    for (const id of ids.slice(0, 5)) report(h, id, "FAILED");
    tick(h);
    h.now += 1000;
    report(h, ids[50]!, "FAILED");
    tick(h);
    expect(h.campaign.stoppedByNodeId).toBe(ids[50]);
  });

  it("ends rolled_back (batch_failed) once every node is back on its previous version", () => {
    const h = atBatchTwo();
    failFirst(h, 6);
    const rolling = inState(h, "rolling_back");
    for (const id of rolling.slice(0, 50)) report(h, id, "REINSTATED", "rollback");
    for (const id of rolling.slice(50)) reboot(h, id, OLD);
    advance(h, MIN);
    expect(inState(h, "rolled_back")).toHaveLength(94);
    expect(h.campaign).toMatchObject({
      phase: "rolled_back",
      code: "batch_failed",
      finishedAt: h.now,
    });
    expect(h.campaign.batches[1]?.state).toBe("rolled_back");
  });

  it("ends failed (rollback_unconfirmed) when a node is not back within the reconnect timeout", () => {
    const h = atBatchTwo();
    failFirst(h, 6);
    const rolling = inState(h, "rolling_back");
    for (const id of rolling.slice(1)) report(h, id, "REINSTATED", "rollback");
    advance(h, 10 * MIN);
    expect(nodeOf(h, rolling[0]!)).toMatchObject({
      state: "rollback_failed",
      code: "rollback_unconfirmed",
    });
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_unconfirmed" });
  });

  it("ends failed (rollback_failed) when a rollback fails", () => {
    const h = atBatchTwo();
    failFirst(h, 6);
    const rolling = inState(h, "rolling_back");
    report(h, rolling[0]!, "FAILED", "rollback");
    for (const id of rolling.slice(1)) report(h, id, "REINSTATED", "rollback");
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
  });

  it("pauses on a breach with on_breach=pause, keeps judging, and re-breaches on a new failure after resume", () => {
    const h = atBatchTwo({ onBreach: "pause" });
    const ids = batchIds(h, 1);
    failFirst(h, 6);
    expect(h.campaign).toMatchObject({ phase: "paused", code: "batch_failed" });
    expect(sent(h, "rollback")).toEqual([]);
    reboot(h, ids[10]!, NEW);
    tick(h);
    expect(nodeOf(h, ids[10]!).state).toBe("verifying");
    tick(h, [{ kind: "resume" }]);
    expect(h.campaign).toMatchObject({ phase: "running", code: undefined });
    expect(h.campaign.batches[1]).toMatchObject({ state: "running", acceptedFailures: 6 });
    report(h, ids[11]!, "FAILED");
    tick(h);
    expect(h.campaign).toMatchObject({
      phase: "paused",
      code: "batch_failed",
      stoppedByNodeId: ids[11],
    });
  });

  it("stops on a breach with on_breach=stop: waiting canceled, in-flight nodes finish, then finishedAt", () => {
    const h = start(fleet(10), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      onBreach: "stop",
      failureThresholdPercent: 0,
      concurrency: 2,
      disruptionBudgetPercent: 100,
    });
    tick(h);
    const [a, b] = sent(h, "upgrade");
    report(h, a!, "REFUSED");
    tick(h);
    expect(h.campaign).toMatchObject({
      phase: "failed",
      code: "batch_failed",
      stoppedByNodeId: a,
      finishedAt: undefined,
    });
    expect(inState(h, "canceled")).toHaveLength(8);
    expect(sent(h, "upgrade")).toHaveLength(2);
    reboot(h, b!, NEW);
    advance(h, 1000);
    expect(nodeOf(h, b!).state).toBe("succeeded");
    expect(h.campaign.finishedAt).toBe(h.now);
    expect(sent(h, "confirm")).toEqual([]);
  });
});

describe("passing batches", () => {
  it("passes a batch only after its minimum duration, confirms its nodes and starts the next at now", () => {
    const h = start(fleet(100), { disruptionBudgetPercent: 100 });
    tick(h);
    bringBack(h, batchIds(h, 0));
    advance(h, HALF_HOUR - 1);
    expect(h.campaign.currentBatch).toBe(0);
    expect(h.last?.wakeAt).toBe(HALF_HOUR);
    advance(h, 1);
    expect(sent(h, "confirm")).toEqual(batchIds(h, 0));
    expect(h.campaign.batches[0]).toMatchObject({ state: "passed", endedAt: HALF_HOUR });
    expect(h.campaign.batches[1]).toMatchObject({ state: "running", startedAt: HALF_HOUR });
    expect(sent(h, "upgrade")).toHaveLength(5 + 20);
  });

  it("excludes paused time from the minimum duration", () => {
    const h = start(fleet(100));
    tick(h);
    bringBack(h, batchIds(h, 0));
    advance(h, 10 * MIN);
    tick(h, [{ kind: "pause" }]);
    advance(h, 60 * MIN);
    expect(h.campaign.currentBatch).toBe(0);
    tick(h, [{ kind: "resume" }]);
    expect(elapsedMs(h.campaign.batches[0]!, h.campaign.pausedAt, h.now)).toBe(10 * MIN);
    advance(h, 20 * MIN - 1);
    expect(h.campaign.currentBatch).toBe(0);
    advance(h, 1);
    expect(h.campaign.currentBatch).toBe(1);
  });

  it("waits for the soak after its last node settled", () => {
    const h = start(fleet(100), { soakMs: 25 * MIN });
    tick(h);
    advance(h, 8 * MIN);
    bringBack(h, batchIds(h, 0));
    advance(h, MIN);
    expect(h.campaign.batches[0]?.settledAt).toBe(9 * MIN);
    advance(h, 34 * MIN - 1 - h.now);
    expect(h.campaign.currentBatch).toBe(0);
    expect(h.last?.wakeAt).toBe(34 * MIN);
    advance(h, 1);
    expect(h.campaign.currentBatch).toBe(1);
  });

  it("passes an empty batch at once", () => {
    const h = start(fleet(3));
    tick(h);
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 0, 2]);
    bringBack(h, batchIds(h, 0));
    advance(h, HALF_HOUR);
    expect(h.campaign.currentBatch).toBe(2);
    expect(h.campaign.batches[1]).toMatchObject({
      state: "passed",
      startedAt: HALF_HOUR,
      endedAt: HALF_HOUR,
    });
  });

  it("completes after the last batch and sets finishedAt", () => {
    const h = start(fleet(20));
    tick(h);
    for (let batch = 0; batch < 3; batch++) {
      bringBack(h, batchIds(h, batch));
      advance(h, HALF_HOUR);
    }
    expect(h.campaign).toMatchObject({ phase: "completed", finishedAt: 90 * MIN, code: undefined });
    expect(inState(h, "succeeded")).toHaveLength(20);
  });
});

describe("admin commands", () => {
  it("pause stops offers while in-flight nodes are still judged, and a failing batch still rolls back", () => {
    const h = start(fleet(100), { concurrency: 2 });
    tick(h);
    tick(h, [{ kind: "pause" }]);
    const [a, b] = sent(h, "upgrade");
    bringBack(h, [a!]);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toHaveLength(2);
    expect(nodeOf(h, a!).state).toBe("verifying");
    report(h, b!, "FAILED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(sent(h, "rollback")).toEqual([a]);
  });

  it("abort without rollback ends aborted at once; in-flight nodes are judged until final, then finishedAt", () => {
    const h = start(fleet(100), { concurrency: 1 });
    tick(h);
    const [a] = sent(h, "upgrade");
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted", finishedAt: undefined });
    expect(inState(h, "canceled")).toHaveLength(99);
    goOffline(h, a!);
    advance(h, 10 * MIN);
    expect(nodeOf(h, a!).state).toBe("timed_out");
    expect(h.campaign).toMatchObject({ phase: "aborted", finishedAt: h.now });
  });

  it("abort with rollback rolls the current batch back and ends aborted, the rollback recorded with it", () => {
    const h = start(fleet(100));
    tick(h);
    tick(h, [{ kind: "abort", rollback: true, reason: "wrong build" }]);
    expect(h.campaign).toMatchObject({ phase: "rolling_back", rollbackCause: "abort" });
    expect(sent(h, "rollback")).toEqual(batchIds(h, 0));
    for (const id of batchIds(h, 0)) report(h, id, "REINSTATED", "rollback");
    const d = tick(h);
    expect(h.campaign).toMatchObject({
      phase: "aborted",
      code: "aborted",
      rollbackCause: "abort",
      message: "wrong build; batch 1 rolled back",
    });
    expect(h.campaign.batches[0]?.state).toBe("rolled_back");
    expect(h.campaign.finishedAt).toBe(h.now);
    expect(d.events).toContainEqual({ kind: "phase_changed", from: "rolling_back", to: "aborted" });
    expect(d.events).toContainEqual({ kind: "finished", phase: "aborted", rolledBackBatch: 0 });
  });

  it("abort with rollback ends failed (rollback_failed) when a rollback fails", () => {
    const h = start(fleet(20), { disruptionBudgetPercent: 100 });
    tick(h);
    tick(h, [{ kind: "abort", rollback: true, reason: "wrong build" }]);
    const [first, ...others] = batchIds(h, 0) as [string, ...string[]];
    report(h, first, "FAILED", "rollback");
    for (const id of others) report(h, id, "REINSTATED", "rollback");
    const d = tick(h);
    expect(h.campaign).toMatchObject({ phase: "failed", code: "rollback_failed" });
    expect(d.events).toContainEqual({ kind: "finished", phase: "failed" });
  });

  it("a breach still ends rolled_back, its finish naming the batch rolled back", () => {
    const h = start(fleet(20), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      disruptionBudgetPercent: 100,
    });
    tick(h);
    for (const id of batchIds(h, 0).slice(0, 2)) report(h, id, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolling_back");
    for (const id of inState(h, "rolling_back")) report(h, id, "REINSTATED", "rollback");
    const d = tick(h);
    expect(h.campaign).toMatchObject({ phase: "rolled_back", code: "batch_failed" });
    expect(d.events).toContainEqual({ kind: "finished", phase: "rolled_back", rolledBackBatch: 0 });
  });

  it("ignores a command that does not apply, and says why", () => {
    const h = start(fleet(10));
    const d = tick(h, [{ kind: "resume" }]);
    expect(d.events).toContainEqual({
      kind: "command_ignored",
      command: { kind: "resume" },
      why: "campaign c1 is running; only a paused campaign can be resumed",
    });
    expect(h.campaign.phase).toBe("running");
  });
});

describe("retry", () => {
  it("takes the nodes that ended failed, timed_out, skipped or canceled, minus those left out", () => {
    const h = start(fleet(20), { concurrency: 1 });
    tick(h);
    const [a] = sent(h, "upgrade");
    report(h, a!, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("rolled_back");
    const keep = inState(h, "canceled")[0]!;
    const r = planRetry(h.campaign, h.nodes, [keep]);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.nodeIds).toContain(a);
    expect(r.nodeIds).not.toContain(keep);
    expect(r.nodeIds).toHaveLength(19);
    expect(r.spec.selector.nodeIds).toEqual(r.nodeIds);
  });

  it("refuses to retry a campaign that has not ended", () => {
    const h = start(fleet(20));
    tick(h);
    expect(planRetry(h.campaign, h.nodes)).toMatchObject({ ok: false, reason: "campaign_state" });
  });
});
