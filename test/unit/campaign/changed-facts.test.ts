import { describe, expect, it } from "vitest";
import { decide } from "../../../control/campaign/decide.js";
import type { Decision } from "../../../control/campaign/index.js";
import { fleet, type Harness, NEW, nodeOf, report, start, tick } from "./harness.js";

/** One decision told which nodes' facts changed since the previous one. */
function tickKnowing(h: Harness, changed: ReadonlySet<string>): Decision {
  return tick(h, [], {
    changedFacts: changed,
    positions: new Map(h.nodes.map((n, i) => [n.nodeId, i])),
  });
}

function becomesCurrent(h: Harness, nodeId: string): void {
  const f = h.facts.get(nodeId);
  if (!f) throw new Error(nodeId);
  h.facts.set(nodeId, { ...f, agentVersion: NEW, bootId: `${f.bootId}-x` });
}

describe("waiting nodes whose facts changed", () => {
  // 20 nodes, one batch, one slot: 19 stay waiting while node-000 is in flight.
  const setup = () => {
    const h = start(fleet(20), { batches: [{ percent: 100, minDurationMs: 0 }], concurrency: 1 });
    tickKnowing(h, new Set()); // the batch is already current: decided as a whole before
    return h;
  };

  it("settles a waiting node already on the target when its facts are said to have changed", () => {
    const h = setup();
    becomesCurrent(h, "node-010");
    tickKnowing(h, new Set(["node-010"]));
    expect(nodeOf(h, "node-010")).toMatchObject({ state: "succeeded", code: "already_current" });
  });

  it("settles the changed nodes in canary order, whatever the order of the hint", () => {
    const h = setup();
    const changed = ["node-003", "node-007", "node-012"];
    for (const id of changed) becomesCurrent(h, id);
    const canaryOrder = [...h.nodes]
      .sort((a, b) => a.order - b.order)
      .map((n) => n.nodeId)
      .filter((id) => changed.includes(id));
    const hint = new Set([...canaryOrder].reverse());
    const reasons = tickKnowing(h, hint).reasons.filter((r) => r.includes("already current"));
    expect(reasons).toEqual(
      canaryOrder.map((id) => `node ${id}: waiting → succeeded: already current`),
    );
  });

  it("leaves a waiting node alone when its facts are not said to have changed", () => {
    const h = setup();
    becomesCurrent(h, "node-010");
    tickKnowing(h, new Set());
    expect(nodeOf(h, "node-010").state).toBe("waiting");
    // Without the hint (any facts may have changed), it is settled.
    const d = decide({
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
    });
    expect(d.changes.nodes.find((n) => n.nodeId === "node-010")?.code).toBe("already_current");
  });

  it("looks at a whole batch that starts within the decision", () => {
    const h = start(fleet(20), {
      batches: [
        { percent: 5, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
      configGraceMs: 0,
    });
    tickKnowing(h, new Set());
    const canary = h.nodes.find((n) => n.batch === 0)?.nodeId ?? "";
    const later = h.nodes.find((n) => n.batch === 1)?.nodeId ?? "";
    becomesCurrent(h, later);
    becomesCurrent(h, canary); // the canary comes back on the target: batch 0 passes
    tickKnowing(h, new Set([canary]));
    expect(h.campaign.currentBatch).toBe(1);
    expect(nodeOf(h, later)).toMatchObject({ state: "succeeded", code: "already_current" });
  });
});

describe("whether a decision looked at the waiting nodes", () => {
  it("says so while the batch runs, and not while it is breached and paused", () => {
    const h = start(fleet(20), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 2,
      failureThresholdPercent: 5,
      disruptionBudgetPercent: 100,
      onBreach: "pause",
    });
    expect(tick(h).lookedAtWaiting).toBe(true);
    const offered = h.nodes.filter((n) => n.state === "offered").map((n) => n.nodeId);
    for (const id of offered) report(h, id, "REFUSED");
    tick(h);
    expect(h.campaign).toMatchObject({ phase: "paused", code: "batch_failed" });
    const waiting = h.nodes.find((n) => n.state === "waiting")?.nodeId ?? "";
    becomesCurrent(h, waiting);
    // Breached: its Hello is not taken into account, so the caller must keep it pending.
    expect(tickKnowing(h, new Set([waiting])).lookedAtWaiting).toBe(false);
    expect(nodeOf(h, waiting).state).toBe("waiting");
    // Resumed with that Hello still pending, the node is settled.
    tick(h, [{ kind: "resume" }], { changedFacts: new Set([waiting]) });
    expect(nodeOf(h, waiting)).toMatchObject({ state: "succeeded", code: "already_current" });
  });

  it("says not while the campaign rolls back after an abort, though its batch is still running", () => {
    const h = start(fleet(20), {
      batches: [{ percent: 100, minDurationMs: 0 }],
      concurrency: 2,
      disruptionBudgetPercent: 100,
    });
    expect(tick(h).lookedAtWaiting).toBe(true);
    const waiting = h.nodes.find((n) => n.state === "waiting")?.nodeId ?? "";
    becomesCurrent(h, waiting);
    const d = tick(h, [{ kind: "abort", rollback: true }], { changedFacts: new Set([waiting]) });
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.batches[0]?.state).toBe("running");
    expect(nodeOf(h, waiting)).toMatchObject({ state: "canceled", code: "aborted" });
    expect(d.lookedAtWaiting).toBe(false);
    expect(tickKnowing(h, new Set([waiting])).lookedAtWaiting).toBe(false);
  });
});
