/**
 * The engine's safety invariants (SPEC §8: I1 no breached batch passes, I2 a rolled-back batch's
 * nodes that reached or may reach the target are sent a rollback, I3 every succeeded node of a
 * passed batch is confirmed, I6 final states never change), each on the scenario that broke it.
 */
import { describe, expect, it } from "vitest";
import { createDraft } from "../../../control/campaign/draft.js";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import { judgePass } from "../../../control/campaign/judge-batch.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  goOffline,
  inState,
  report,
  start,
  tick,
} from "./harness.js";

const oneBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 0 }],
  failureThresholdPercent: 5,
  disruptionBudgetPercent: 100,
};

/** The node's stream is gone long enough for it to be skipped when a slot is free. */
function offline(h: Harness, nodeId: string): void {
  goOffline(h, nodeId);
}

describe("I1: no breached batch passes", () => {
  it("breaches a batch whose offline nodes are skipped at its end (5 of 90 offerable > 5 %)", () => {
    const h = start(fleet(100), oneBatch);
    const ids = batchIds(h, 0);
    const away = ids.slice(90);
    for (const id of away) offline(h, id);
    tick(h);
    expect(inState(h, "offered")).toEqual(ids.slice(0, 90));
    for (const id of ids.slice(0, 5)) report(h, id, "REFUSED");
    bringBack(h, ids.slice(5, 90));
    advance(h, 1000);
    expect(inState(h, "skipped")).toEqual(away);
    expect(h.campaign.batches[0]?.state).toBe("breached");
    expect(h.campaign).toMatchObject({
      phase: "rolling_back",
      code: "batch_failed",
      message: "5 of 90 nodes of batch 1 failed (threshold 5 %)",
    });
  });

  it("refuses to pass a batch whose failures exceed its threshold, whatever rule ran before", () => {
    const h = start(fleet(10), oneBatch);
    tick(h);
    const nodes = h.nodes.map((n, i) =>
      i === 0
        ? { ...n, state: "failed" as const, code: "rejected" as const, finishedAt: h.now }
        : { ...n, state: "succeeded" as const, finishedAt: h.now },
    );
    const d = createDraft(h.campaign, nodes, h.facts, h.now + 1, h.target);
    expect(() => judgePass(d)).toThrow(/refusing to pass batch 1: 1 of 10 nodes failed/);
  });
});
