/**
 * The pure engine at the size of a large fleet: nothing it does may grow the call stack with
 * the number of nodes (an argument list spread from a node list overflows it near 130,000).
 */
import { describe, expect, it } from "vitest";
import { fleet, MIN, start, tick } from "./harness.js";

const NODES = 150_000;

describe("a campaign of 150,000 nodes through decide", () => {
  it("offers them all at once, wakes at their reconnect deadline, then breaches", () => {
    const h = start(fleet(NODES), {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      disruptionBudgetPercent: 100,
      reconnectTimeoutMs: 10 * MIN,
    });
    const first = tick(h);
    expect(first.actions.filter((a) => a.kind === "upgrade")).toHaveLength(NODES);
    expect(first.wakeAt).toBe(10 * MIN);
    // No node comes back: at the deadline every one times out and the batch breaches.
    h.now = first.wakeAt as number;
    const second = tick(h);
    expect(h.nodes.filter((n) => n.code === "reconnect_timeout")).toHaveLength(NODES);
    expect(h.campaign.batches[0]?.state).not.toBe("running");
    expect(second.actions.filter((a) => a.kind === "rollback").length).toBeGreaterThan(0);
  }, 300_000);
});
