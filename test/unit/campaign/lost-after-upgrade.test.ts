/**
 * A node back on the target that then goes away holds its batch's pass, and becomes a failure
 * of its batch (`lost_after_upgrade`) when it is not back within the reconnect timeout: a
 * release that kills its host minutes after it starts must not pass a batch.
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
  goOnline,
  goReconnecting,
  MIN,
  nodeOf,
  sent,
  start,
  tick,
} from "./harness.js";

/** Four nodes, batches 50/100 of 5 minutes each, reconnect timeout 10 minutes, no config grace. */
const spec: Partial<CampaignSpecInput> = {
  batches: [50, 100].map((percent) => ({ percent, minDurationMs: 5 * MIN })),
  disruptionBudgetPercent: 100,
  reconnectTimeoutMs: 10 * MIN,
};

/** Both canaries back on the target at 1 min (verifying), both streams gone for good at 3 min. */
function canariesGoneAtThree(more: Partial<CampaignSpecInput> = {}) {
  const h = start(fleet(4), { ...spec, ...more });
  tick(h);
  const canaries = batchIds(h, 0);
  expect(canaries).toHaveLength(2);
  h.now = MIN;
  bringBack(h, canaries);
  tick(h);
  for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
  h.now = 3 * MIN;
  for (const id of canaries) goOffline(h, id);
  tick(h);
  return { h, canaries };
}

/** The upgrades offered to batch 2 so far. */
function batchTwoOffers(h: Harness): string[] {
  const two = new Set(batchIds(h, 1));
  return sent(h, "upgrade").filter((id) => two.has(id));
}

describe("a node back on the target that goes offline before its batch passes", () => {
  it("holds the pass: past the batch's minimum, nothing is confirmed and batch 2 is not offered", () => {
    const { h } = canariesGoneAtThree();
    advance(h, 5 * MIN);
    expect(h.campaign.batches[0]?.state).toBe("running");
    expect(sent(h, "confirm")).toEqual([]);
    expect(batchTwoOffers(h)).toEqual([]);
  });

  it("fails lost_after_upgrade when not back within the reconnect timeout, and the batch breaches", () => {
    const { h, canaries } = canariesGoneAtThree();
    h.now = 13 * MIN - 1;
    tick(h);
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
    h.now = 13 * MIN;
    tick(h);
    for (const id of canaries) {
      expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "lost_after_upgrade" });
      expect(nodeOf(h, id).message).toContain("10 minutes");
    }
    expect(h.campaign).toMatchObject({ phase: "rolling_back", code: "batch_failed" });
    expect(sent(h, "confirm")).toEqual([]);
    expect(batchTwoOffers(h)).toEqual([]);
  });

  it("sends the rollback to a lost node: it came back on the target and may run it still", () => {
    const { h, canaries } = canariesGoneAtThree();
    advance(h, 10 * MIN);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(sent(h, "rollback").sort()).toEqual([...canaries].sort());
  });

  it("wakes the decision at the lost deadline", () => {
    const { h } = canariesGoneAtThree();
    expect(advance(h, 3 * MIN).wakeAt).toBe(13 * MIN);
  });

  it("counts toward the threshold like any failure: one lost of two at 50 % lets the other pass", () => {
    const { h, canaries } = canariesGoneAtThree({ failureThresholdPercent: 50 });
    const [lost, back] = canaries as [string, string];
    h.now = 4 * MIN;
    goOnline(h, back);
    tick(h);
    advance(h, 9 * MIN);
    expect(nodeOf(h, lost)).toMatchObject({ state: "failed", code: "lost_after_upgrade" });
    expect(h.campaign.batches[0]?.state).toBe("passed");
    expect(sent(h, "confirm")).toEqual([back]);
  });

  it("passes once the node is back online before its timeout, and confirms it", () => {
    const { h, canaries } = canariesGoneAtThree();
    h.now = 8 * MIN;
    for (const id of canaries) goOnline(h, id);
    tick(h);
    expect(h.campaign.batches[0]?.state).toBe("passed");
    expect(sent(h, "confirm").sort()).toEqual([...canaries].sort());
    expect(batchTwoOffers(h)).toHaveLength(2);
  });

  it("counts the timeout again from scratch when the node goes offline a second time", () => {
    const { h, canaries } = canariesGoneAtThree({
      batches: [50, 100].map((percent) => ({ percent, minDurationMs: 60 * MIN })),
    });
    h.now = 8 * MIN;
    for (const id of canaries) goOnline(h, id);
    tick(h);
    h.now = 9 * MIN;
    for (const id of canaries) goOffline(h, id);
    tick(h);
    h.now = 13 * MIN;
    tick(h);
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
    h.now = 19 * MIN;
    tick(h);
    for (const id of canaries) expect(nodeOf(h, id).code).toBe("lost_after_upgrade");
  });

  it("is not judged lost within a reconnect timeout of this Control becoming ready", () => {
    const { h, canaries } = canariesGoneAtThree();
    h.now = 13 * MIN;
    for (const id of canaries) goReconnecting(h, id);
    tick(h, [], { readyAt: 12 * MIN });
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
    expect(h.campaign.batches[0]?.state).toBe("running");
    h.now = 22 * MIN;
    tick(h, [], { readyAt: 12 * MIN });
    for (const id of canaries) expect(nodeOf(h, id).code).toBe("lost_after_upgrade");
  });
});

describe("a node back on the target that is away when the campaign is aborted without rollback", () => {
  it("is not succeeded while away: lost_after_upgrade past its timeout", () => {
    const { h, canaries } = canariesGoneAtThree();
    h.now = 4 * MIN;
    tick(h, [{ kind: "abort", rollback: false }]);
    expect(h.campaign.phase).toBe("aborted");
    advance(h, 2 * MIN);
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("verifying");
    h.now = 13 * MIN;
    tick(h);
    for (const id of canaries)
      expect(nodeOf(h, id)).toMatchObject({ state: "failed", code: "lost_after_upgrade" });
    expect(h.campaign.finishedAt).toBe(13 * MIN);
  });

  it("is succeeded, unconfirmed, once back online before its timeout", () => {
    const { h, canaries } = canariesGoneAtThree();
    h.now = 4 * MIN;
    tick(h, [{ kind: "abort", rollback: false }]);
    h.now = 8 * MIN;
    for (const id of canaries) goOnline(h, id);
    tick(h);
    for (const id of canaries) expect(nodeOf(h, id).state).toBe("succeeded");
    expect(sent(h, "confirm")).toEqual([]);
  });
});
