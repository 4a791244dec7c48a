/**
 * Judging a batch, rule by rule: what each on_breach records (the batch's state and end, the
 * campaign's code, message and reasons, the events), the I1 guard that refuses to pass a
 * breached batch whatever the order of rules, and the confirms of a passing batch.
 */
import { describe, expect, it } from "vitest";
import { createDraft } from "../../../control/campaign/draft.js";
import type { CampaignNode, CampaignSpecInput } from "../../../control/campaign/index.js";
import { judgePass } from "../../../control/campaign/judge-batch.js";
import type { Harness } from "./harness.js";
import { batchIds, bringBack, fleet, MIN, nodeOf, report, sent, start, tick } from "./harness.js";

/**
 * Ten nodes in one batch, all offered at t=0; the first refuses at t=5 min (after the
 * operator paused the campaign at t=2 min when `pauseFirst`).
 */
function refusedAtFive(
  spec: Partial<CampaignSpecInput>,
  pauseFirst = false,
): { h: Harness; first: string } {
  const h = start(fleet(10), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    failureThresholdPercent: 0,
    disruptionBudgetPercent: 100,
    ...spec,
  });
  tick(h);
  const first = batchIds(h, 0)[0] as string;
  if (pauseFirst) {
    h.now = 2 * MIN;
    tick(h, [{ kind: "pause" }]);
  }
  h.now = 5 * MIN;
  report(h, first, "REFUSED");
  return { h, first };
}

const WHY = "1 of 10 nodes of batch 1 failed (threshold 0 %)";

describe("a breach, per on_breach", () => {
  it("stop: the batch ends breached now, the campaign fails with the reason, in-flight nodes stay", () => {
    const { h, first } = refusedAtFive({ onBreach: "stop" });
    const d = tick(h);
    expect(h.campaign.batches[0]).toMatchObject({ state: "breached", endedAt: 5 * MIN });
    expect(h.campaign).toMatchObject({
      phase: "failed",
      code: "batch_failed",
      message: WHY,
      stoppedByNodeId: first,
      pausedAt: undefined,
    });
    expect(d.reasons).toContain(`campaign: stopped: ${WHY}`);
    expect(d.events).toContainEqual({
      kind: "breached",
      batch: 0,
      failed: 1,
      offerable: 10,
      stoppedByNodeId: first,
    });
    expect(d.events.some((e) => e.kind === "gate")).toBe(false);
  });

  it("stop while paused: the open pause is closed into the batch's paused time", () => {
    const { h } = refusedAtFive({ onBreach: "stop" }, true);
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "failed", pausedAt: undefined });
    expect(h.campaign.batches[0]).toMatchObject({ pausedMs: 3 * MIN, endedAt: 5 * MIN });
  });

  it("pause: the campaign pauses now with the reason; the batch stays running, unended", () => {
    const { h, first } = refusedAtFive({ onBreach: "pause" });
    const d = tick(h);
    expect(h.campaign).toMatchObject({
      phase: "paused",
      pausedAt: 5 * MIN,
      code: "batch_failed",
      message: WHY,
      stoppedByNodeId: first,
    });
    expect(h.campaign.batches[0]).toMatchObject({ state: "breached", endedAt: undefined });
    expect(d.reasons).toContain(`campaign: paused: ${WHY}`);
    expect(sent(h, "rollback")).toEqual([]);
  });

  it("an abort after a breach paused it names no node as the stopper: the operator stopped it", () => {
    const { h, first } = refusedAtFive({ onBreach: "pause" });
    tick(h);
    expect(h.campaign.stoppedByNodeId).toBe(first);
    h.now = 6 * MIN;
    tick(h, [{ kind: "abort", rollback: true, reason: "review" }]);
    expect(h.campaign).toMatchObject({
      code: "aborted",
      message: "review",
      stoppedByNodeId: undefined,
    });
  });

  it("pause while already paused by the operator: the pause keeps its start", () => {
    const { h } = refusedAtFive({ onBreach: "pause" }, true);
    const d = tick(h);
    expect(h.campaign).toMatchObject({ phase: "paused", pausedAt: 2 * MIN, code: "batch_failed" });
    expect(d.reasons.some((r) => r.startsWith("campaign: paused:"))).toBe(false);
  });

  it("none after an abort: an in-flight node failing later breaches nothing and sends nothing", () => {
    const { h } = refusedAtFive({ onBreach: "rollback" });
    h.now = 4 * MIN;
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign.phase).toBe("aborted");
    h.now = 5 * MIN;
    const d = tick(h);
    expect(h.campaign).toMatchObject({ phase: "aborted", code: "aborted" });
    expect(h.campaign.batches[0]?.state).not.toBe("breached");
    expect(d.events.some((e) => e.kind === "breached")).toBe(false);
    expect(sent(h, "rollback")).toEqual([]);
  });

  it("refuses a stored on_breach it does not know, naming it", () => {
    const { h } = refusedAtFive({ onBreach: "explode" as never });
    expect(() => tick(h)).toThrow('unexpected on_breach: "explode"');
  });

  it("rollback: the campaign rolls the batch back with the reason", () => {
    const { h } = refusedAtFive({ onBreach: "rollback" });
    const d = tick(h);
    expect(h.campaign).toMatchObject({ code: "batch_failed", message: WHY });
    expect(sent(h, "rollback").length).toBeGreaterThan(0);
    expect(d.events).toContainEqual(expect.objectContaining({ kind: "breached", batch: 0 }));
  });
});

describe("passing a batch", () => {
  it("refuses (I1) to pass a batch whose failures exceed its threshold, whatever ran before", () => {
    const h = start(fleet(10), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      failureThresholdPercent: 0,
      disruptionBudgetPercent: 100,
    });
    tick(h);
    bringBack(h, batchIds(h, 0));
    h.now = MIN;
    // Records as a store could hold them if a rule had not run: one node failed, the batch
    // still running, every node settled.
    const ids = batchIds(h, 0);
    h.nodes = h.nodes.map(
      (n): CampaignNode =>
        n.nodeId === ids[0]
          ? { ...n, state: "failed", code: "rejected" }
          : { ...n, state: "succeeded", code: undefined },
    );
    const d = createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
    expect(() => judgePass(d)).toThrow(
      "campaign c1: refusing to pass batch 1: 1 of 10 nodes failed (threshold 0 %)",
    );
  });

  it("refuses (I1) to pass a batch on which a gate fails, whatever ran before", () => {
    const h = start(fleet(2), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      gates: [{ kind: "webhook", url: "http://hook" }],
    });
    tick(h);
    h.now = 10_000;
    bringBack(h, batchIds(h, 0));
    tick(h);
    expect(h.campaign.batches[0]?.settledAt).toBe(10_000);
    h.now = 20_000;
    const d = createDraft(h.campaign, h.nodes, h.facts, h.now, h.target);
    d.gateResults = [
      { batch: 0, gate: 0, status: "fail", at: 15_000, value: "HTTP 503", message: "down" },
    ];
    expect(() => judgePass(d)).toThrow("campaign c1: refusing to pass batch 1: a gate fails");
  });

  it("confirms its verifying nodes once, records their confirm, and says so", () => {
    const h = start(fleet(4), {
      batches: [{ percent: 100, minDurationMs: 10 * MIN }],
      disruptionBudgetPercent: 100,
    });
    tick(h);
    bringBack(h, batchIds(h, 0));
    h.now = 10 * MIN;
    const d = tick(h);
    const id = batchIds(h, 0)[0] as string;
    expect(nodeOf(h, id)).toMatchObject({
      state: "succeeded",
      confirmOperationId: `c1/${id}/confirm`,
      message: "on 2.0.0, confirmed",
    });
    expect(d.reasons).toContain(`node ${id}: verifying → succeeded: batch passed`);
    expect(d.events).toContainEqual({ kind: "batch_passed", batch: 0 });
    expect(d.events).toContainEqual({ kind: "finished", phase: "completed" });
    expect(d.reasons).toContain("campaign: every batch passed");
    expect(d.reasons).toContain("campaign: finished (completed)");
    h.now = 11 * MIN;
    tick(h);
    expect(sent(h, "confirm")).toEqual(batchIds(h, 0));
  });
});
