import { describe, expect, it } from "vitest";
import {
  advance,
  batchIds,
  bringBack,
  fleet,
  goOffline,
  goOnline,
  goReconnecting,
  inState,
  nodeOf,
  sent,
  start,
  tick,
} from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];

describe("offline versus reconnecting (no stream is not offline)", () => {
  it("skips nothing right after a restart, while every node is reconnecting, and offers them once back", () => {
    const h = start(fleet(4), { batches: one, concurrency: 2, disruptionBudgetPercent: 100 });
    for (const id of batchIds(h, 0)) goReconnecting(h, id);
    const d = tick(h);
    expect(d.actions).toEqual([]);
    expect(inState(h, "waiting")).toHaveLength(4);
    expect(inState(h, "skipped")).toEqual([]);
    advance(h, 30_000);
    expect(inState(h, "skipped")).toEqual([]);
    for (const id of batchIds(h, 0)) goOnline(h, id);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toEqual(batchIds(h, 0).slice(0, 2));
  });

  it("does not skip offline nodes while another waiting node is only reconnecting", () => {
    const h = start(fleet(3), { batches: one });
    const [a, b, c] = batchIds(h, 0) as [string, string, string];
    goOffline(h, a);
    goOffline(h, b);
    goReconnecting(h, c);
    tick(h);
    expect(inState(h, "waiting").sort()).toEqual([a, b, c].sort());
    // The reconnecting node's offlineAfter runs out: now every waiting node is offline.
    goOffline(h, c);
    advance(h, 1000);
    for (const id of [a, b, c]) {
      expect(nodeOf(h, id)).toMatchObject({ state: "skipped", code: "node_offline" });
    }
  });

  it("offers a reconnecting node once it is back, after the others are done", () => {
    const h = start(fleet(3), { batches: one, concurrency: 1 });
    const [a, b, c] = batchIds(h, 0) as [string, string, string];
    goReconnecting(h, b);
    tick(h);
    bringBack(h, [a]);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toEqual([a, c]);
    bringBack(h, [c]);
    advance(h, 1000);
    expect(nodeOf(h, b).state).toBe("waiting");
    goOnline(h, b);
    advance(h, 1000);
    expect(sent(h, "upgrade")).toEqual([a, c, b]);
  });

  it("counts a node without facts (never seen) as offline", () => {
    const h = start(fleet(2), { batches: one });
    const [a, b] = batchIds(h, 0) as [string, string];
    h.facts.delete(a);
    goOffline(h, b);
    tick(h);
    expect(nodeOf(h, a)).toMatchObject({ state: "skipped", code: "node_offline" });
    expect(nodeOf(h, b)).toMatchObject({ state: "skipped", code: "node_offline" });
  });
});
