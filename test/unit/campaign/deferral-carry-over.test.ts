/**
 * A node still deferring when the rest of its batch is ready to pass carries over to the next
 * batch, on the pure engine: the batch passes on the nodes that did upgrade, and the deferring
 * node becomes a node of the next batch — offered there at its retry time within that batch's
 * slots and budgets, counted in that batch's threshold, skipped `deferred` once its max defer
 * (from its first deferral) has passed. The last batch passes only when all its nodes are final,
 * so a node deferring there holds it, as before; and a node is never carried when its batch
 * would breach, or fall short of its minimum sample, without it.
 */
import { describe, expect, it } from "vitest";
import type {
  CampaignEvent,
  CampaignSpecInput,
  PoolLoad,
} from "../../../control/campaign/index.js";
import { auditRowsOf } from "../../../control/campaign-worker/audit.js";
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

/** Two batches of `size / 2` nodes, 10 minutes each, threshold 0, every node at once. */
const twoBatches = (extra: Partial<CampaignSpecInput> = {}): Partial<CampaignSpecInput> => ({
  batches: [
    { percent: 50, minDurationMs: 10 * MIN },
    { percent: 100, minDurationMs: 10 * MIN },
  ],
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
  maxDeferMs: 60 * MIN,
  ...extra,
});

/**
 * Decides and answers: `busyIds` answer every offer DEFERRED, every other offered node
 * restarts into the target at once; decides again after any answer.
 */
function step(h: Harness): void {
  tick(h);
  const offered = inState(h, "offered");
  for (const id of offered) {
    if (busyIds.has(id)) report(h, id, "DEFERRED", "upgrade", busy);
    else {
      report(h, id, "RESTARTING");
      bringBack(h, [id], NEW);
    }
  }
  if (offered.length > 0) tick(h);
}

let busyIds = new Set<string>();

/** Runs the campaign to `until`, a {@link step} every 10 s and one at `until`. */
function runTo(h: Harness, until: number, busyNodes: readonly string[]): void {
  busyIds = new Set(busyNodes);
  while (h.now < until) {
    step(h);
    h.now = Math.min(until, h.now + 10_000);
  }
  step(h);
}

describe("a node still deferring when the rest of its batch is ready to pass", () => {
  it("carries over to the next batch: the batch passes on the nodes that upgraded, at its minimum duration", () => {
    const h = start(fleet(4), twoBatches());
    const [busyNode, upgraded] = batchIds(h, 0) as [string, string];
    const second = batchIds(h, 1);
    runTo(h, 10 * MIN, [busyNode]);
    expect(h.campaign.batches[0]).toMatchObject({ state: "passed", endedAt: 10 * MIN });
    expect(h.campaign.currentBatch).toBe(1);
    expect(nodeOf(h, upgraded)).toMatchObject({ state: "succeeded" });
    expect(nodeOf(h, busyNode)).toMatchObject({
      batch: 1,
      carriedFrom: 0,
      deferredAt: 0,
      deferrals: expect.any(Number),
    });
    expect(nodeOf(h, busyNode).state).not.toBe("skipped");
    // Counted where it now is: batch 1 holds it beside its own nodes, batch 0 no more.
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 3]);
    expect(batchIds(h, 1).sort()).toEqual([...second, busyNode].sort());
    // Offered again in batch 1 at once (its retry time is long past), with the batch's own nodes.
    expect(nodeOf(h, busyNode).offeredAt).toBe(10 * MIN);
  });

  it("is then a node of the next batch: it takes the upgrade there and the campaign completes", () => {
    const h = start(fleet(4), twoBatches());
    const [busyNode] = batchIds(h, 0) as [string];
    runTo(h, 10 * MIN, [busyNode]);
    runTo(h, 20 * MIN, []);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 1, state: "succeeded" });
    expect(h.campaign.phase).toBe("completed");
  });

  it("counts in the next batch's threshold: its failure there breaches that batch, not the one that passed", () => {
    const h = start(fleet(4), twoBatches({ onBreach: "stop" }));
    const [busyNode] = batchIds(h, 0) as [string];
    runTo(h, 10 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode).batch).toBe(1);
    // No longer busy, it takes the next offer (at its retry time) and fails to apply it.
    while (nodeOf(h, busyNode).state !== "offered" && h.now < 20 * MIN) {
      h.now += 10_000;
      tick(h);
    }
    report(h, busyNode, "FAILED", "upgrade", { code: "apply_failed", message: "disk full" });
    tick(h);
    expect(h.campaign.batches.map((b) => b.state)).toEqual(["passed", "breached"]);
    expect(h.campaign).toMatchObject({ phase: "failed", stoppedByNodeId: busyNode });
    expect(h.campaign.message).toContain("1 of 3 nodes of batch 2 failed");
  });

  it("is bounded by its max defer from its first deferral: skipped deferred in the batch it was carried to", () => {
    const h = start(fleet(4), twoBatches({ maxDeferMs: 15 * MIN }));
    const [busyNode] = batchIds(h, 0) as [string];
    runTo(h, 10 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode).batch).toBe(1);
    runTo(h, 14 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode).state).not.toBe("skipped");
    runTo(h, 16 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 1, state: "skipped", code: "deferred" });
    runTo(h, 20 * MIN, [busyNode]);
    expect(h.campaign.phase).toBe("completed");
  });

  it("is offered in the next batch only within its slots: one at a time under concurrency 1", () => {
    const h = start(fleet(4), twoBatches({ concurrency: 1 }));
    const [busyNode] = batchIds(h, 0) as [string];
    runTo(h, 10 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode).batch).toBe(1);
    for (let t = 10 * MIN; t < 20 * MIN; t += 10_000) {
      runTo(h, t, [busyNode]);
      const inFlight = h.nodes.filter((n) =>
        ["offered", "applying", "restarting"].includes(n.state),
      );
      expect(inFlight.length).toBeLessThanOrEqual(1);
    }
  });

  it("is offered in the next batch only within its pool's budget, counted over every campaign", () => {
    const pools = new Map<string, PoolLoad>([["", { size: 100, inFlightElsewhere: 4 }]]);
    const h = start(fleet(4), twoBatches({ disruptionBudgetPercent: 5 }));
    const [busyNode] = batchIds(h, 0) as [string];
    // The pool allows 5 in flight; other campaigns hold 4: one node of this one at a time.
    for (let i = 0; i < 200 && h.now <= 20 * MIN; i++) {
      tick(h, [], { pools });
      const flying = h.nodes.filter((n) => ["offered", "applying", "restarting"].includes(n.state));
      expect(flying.length).toBeLessThanOrEqual(1);
      for (const n of flying) {
        if (n.nodeId === busyNode) report(h, n.nodeId, "DEFERRED", "upgrade", busy);
        else {
          report(h, n.nodeId, "RESTARTING");
          bringBack(h, [n.nodeId], NEW);
        }
      }
      tick(h, [], { pools });
      h.now += 10_000;
    }
    expect(nodeOf(h, busyNode).batch).toBe(1);
  });
});

describe("a deferring node carried over with a ramp", () => {
  /** Steps of 10 minutes holding at most 2 nodes each (the first at most 1: the canary share). */
  const ramp: Partial<CampaignSpecInput> = {
    ...twoBatches(),
    batches: [],
    ramp: { startPerMinute: 0.2, factor: 1, stepMs: 10 * MIN },
  };

  it("goes to the next step, which moves on a node it has not offered yet to the first later step with room: no step holds more than its rate", () => {
    const h = start(fleet(6), ramp);
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 2, 2, 1]);
    const busyNode = batchIds(h, 1)[0] as string;
    runTo(h, 20 * MIN, [busyNode]);
    expect(h.campaign.batches[1]?.state).toBe("passed");
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 2, carriedFrom: 1, state: "waiting" });
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 1, 2, 2]);
    const [, moved] = batchIds(h, 3) as [string, string];
    expect(nodeOf(h, moved).state).toBe("waiting");
    expect(nodeOf(h, moved).carriedFrom).toBeUndefined();
  });

  it("is not carried when every later step is full to its rate: its step waits for it", () => {
    const h = start(fleet(5), ramp);
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 2, 2]);
    const busyNode = batchIds(h, 1)[0] as string;
    runTo(h, 25 * MIN, [busyNode]);
    expect(h.campaign.currentBatch).toBe(1);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 1, state: "waiting" });
  });
});

describe("a deferring node is not carried over", () => {
  it("when no other node of its batch took the upgrade: the batch would pass on nothing", () => {
    const h = start(fleet(4), twoBatches());
    const canaries = batchIds(h, 0);
    runTo(h, 12 * MIN, canaries);
    expect(h.campaign.currentBatch).toBe(0);
    for (const id of canaries) expect(nodeOf(h, id)).toMatchObject({ batch: 0 });
  });

  it("out of the last batch: the last batch passes only once all its nodes are final (max defer)", () => {
    const h = start(fleet(4), twoBatches({ maxDeferMs: 30 * MIN }));
    const busyNode = batchIds(h, 1)[0] as string;
    runTo(h, 25 * MIN, [busyNode]);
    expect(h.campaign.currentBatch).toBe(1);
    expect(h.campaign.batches[1]?.state).toBe("running");
    expect(nodeOf(h, busyNode).batch).toBe(1);
    runTo(h, 45 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode)).toMatchObject({ state: "skipped", code: "deferred" });
    expect(h.campaign.phase).toBe("completed");
  });

  it("when its batch would breach without it: 1 failed of 20 is within 5 %, 1 of 19 is not", () => {
    const h = start(fleet(40), {
      ...twoBatches(),
      failureThresholdPercent: 5,
    });
    const [failing, busyNode] = batchIds(h, 0) as [string, string];
    tick(h);
    report(h, failing, "REFUSED");
    runTo(h, 12 * MIN, [busyNode]);
    expect(nodeOf(h, failing).state).toBe("failed");
    expect(h.campaign.currentBatch).toBe(0);
    expect(h.campaign.batches[0]?.state).toBe("running");
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 0, state: "waiting" });
  });

  it("when its batch needs it for its minimum sample", () => {
    const h = start(fleet(4), { ...twoBatches(), minCanaries: 2 });
    const [busyNode] = batchIds(h, 0) as [string];
    runTo(h, 12 * MIN, [busyNode]);
    expect(h.campaign.currentBatch).toBe(0);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 0, state: "waiting" });
  });
});

describe("the audit row of a pass that carried nodes over", () => {
  it("says how many deferring nodes went to a later batch", () => {
    const h = start(fleet(4), twoBatches());
    const [busyNode] = batchIds(h, 0) as [string];
    let passed: CampaignEvent | undefined;
    busyIds = new Set([busyNode]);
    while (passed === undefined && h.now <= 10 * MIN) {
      step(h);
      passed = h.last?.events.find((e) => e.kind === "batch_passed");
      h.now += 10_000;
    }
    expect(passed).toEqual({ kind: "batch_passed", batch: 0, carriedOver: 1 });
    const [row] = auditRowsOf("c1", [passed as CampaignEvent], []);
    expect(row).toMatchObject({
      action: "batch.pass",
      message:
        "campaign c1: batch 1 passed; 1 node(s) still deferring carried over to a later batch",
      detail: { batch: 0, carriedOver: 1 },
    });
  });
});
