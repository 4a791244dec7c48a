/**
 * A deferring node carried over by a ramp goes into the next step, the one that starts as its
 * own passes (that step makes room by moving on a node it has not offered yet), never into a
 * later, not yet running step: there nothing would look at it. If its Agent takes a later
 * delivery of the offer (it forgets a deferred operation, and applies a second delivery once no
 * longer busy) and comes back on the target, a breach of the step rolls it back; once no longer
 * busy it is offered again within its max defer; and it never makes the sample of a step it
 * joins short (`--min-canaries`).
 */
import { describe, expect, it } from "vitest";
import type { CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  batchIds,
  bringBack,
  fleet,
  inState,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  start,
  tick,
} from "./harness.js";

const busy = { code: "deferred", message: "the update lock /run/lock held" };
let busyIds = new Set<string>();
const failIds = new Set<string>();

function step(h: Harness): void {
  tick(h);
  const offered = inState(h, "offered");
  for (const id of offered) {
    if (busyIds.has(id)) report(h, id, "DEFERRED", "upgrade", busy);
    else if (failIds.has(id)) report(h, id, "FAILED", "upgrade", { code: "apply_failed" });
    else {
      report(h, id, "RESTARTING");
      bringBack(h, [id], NEW);
    }
  }
  // Every rollback sent is carried out at once: REINSTATED, back on the old release.
  const rollbacks = h.actions.filter((a) => a.kind === "rollback").map((a) => a.nodeId);
  for (const id of rollbacks) {
    if (done.has(id)) continue;
    done.add(id);
    report(h, id, "REINSTATED", "rollback");
    reboot(h, id, OLD);
  }
  if (offered.length > 0 || rollbacks.length > 0) tick(h);
}
const done = new Set<string>();

function runTo(h: Harness, until: number, busyNodes: readonly string[]): void {
  busyIds = new Set(busyNodes);
  while (h.now < until) {
    step(h);
    h.now = Math.min(until, h.now + 10_000);
  }
  step(h);
}

const ramp: Partial<CampaignSpecInput> = {
  batches: [],
  ramp: { startPerMinute: 0.2, factor: 1, stepMs: 10 * MIN },
  failureThresholdPercent: 0,
  disruptionBudgetPercent: 100,
  configGraceMs: 0,
  maxDeferMs: 60 * MIN,
};

describe("a node carried over by a ramp that then runs the target", () => {
  it("is rolled back (or held in flight) when the step in between breaches", () => {
    failIds.clear();
    done.clear();
    const h = start(fleet(6), ramp);
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 2, 2, 1]);
    const busyNode = batchIds(h, 1)[0] as string;
    runTo(h, 20 * MIN, [busyNode]);
    // Carried into step 3, which starts: it was full to its rate, so its last node moved on.
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 2, carriedFrom: 1, state: "waiting" });
    expect(h.campaign.currentBatch).toBe(2);
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 1, 2, 2]);
    // Its Agent applied a later delivery of the offer it deferred: it reports on it and comes
    // back on the target.
    report(h, busyNode, "RESTARTING");
    reboot(h, busyNode, NEW);
    // The other node of step 3 (index 2) fails: the step breaches and rolls back.
    const [failing] = batchIds(h, 2).filter((id) => id !== busyNode) as [string];
    failIds.add(failing);
    runTo(h, 25 * MIN, []);
    runTo(h, 40 * MIN, []);
    // It ran the target: the step's rollback reached it, and it is back on the old release.
    const rollbackSent = h.actions.some((a) => a.kind === "rollback" && a.nodeId === busyNode);
    expect(h.campaign.code).toBe("batch_failed");
    expect({ phase: h.campaign.phase, state: nodeOf(h, busyNode).state, rollbackSent }).toEqual({
      phase: "rolled_back",
      state: "rolled_back",
      rollbackSent: true,
    });
    expect(h.facts.get(busyNode)?.agentVersion).toBe(OLD);
  });
});

describe("a node carried over by a ramp that is busy only briefly", () => {
  it("is offered again within its max defer once it is no longer busy", () => {
    failIds.clear();
    done.clear();
    // 20 nodes: steps [1, 2, 2, …, 2, 1], ten minutes each; the last starts at 100 minutes.
    const h = start(fleet(20), ramp);
    const sizes = h.campaign.batches.map((b) => b.nodeCount);
    expect(sizes[0]).toBe(1);
    expect(sizes.length).toBeGreaterThan(8);
    const busyNode = batchIds(h, 1)[0] as string;
    // Busy (it answers DEFERRED) until step 2 is otherwise ready to pass at 20 minutes.
    runTo(h, 20 * MIN, [busyNode]);
    const carried = nodeOf(h, busyNode);
    expect(carried).toMatchObject({ carriedFrom: 1, state: "waiting", batch: 2 });
    const sentBefore = h.actions.length;
    // From then on it is not busy: it would take any offer. Its max defer (60 min) runs out
    // at about 70 minutes.
    runTo(h, 130 * MIN, []);
    const n = nodeOf(h, busyNode);
    const offersAfterCarry = h.actions
      .slice(sentBefore)
      .filter((a) => a.kind === "upgrade" && a.nodeId === busyNode).length;
    expect({ state: n.state, code: n.code, offersAfterCarry }).toEqual({
      state: "succeeded",
      code: undefined,
      offersAfterCarry: 1,
    });
  });
});

describe("a node carried over by a ramp with --min-canaries", () => {
  it("does not make that step breach min_canaries_unmet when it stays busy past its max defer", () => {
    failIds.clear();
    done.clear();
    // Rate doubling every 10-minute step: steps hold 2 (min canaries), 3, 8, then the last 1.
    const h = start(fleet(14), {
      ...ramp,
      ramp: { startPerMinute: 0.2, factor: 2, stepMs: 10 * MIN },
      minCanaries: 2,
    });
    const sizes = h.campaign.batches.map((b) => b.nodeCount);
    expect(sizes).toEqual([2, 3, 8, 1]);
    const busyNode = batchIds(h, 1)[0] as string;
    // Busy for good: it answers every offer DEFERRED.
    runTo(h, 20 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode)).toMatchObject({ carriedFrom: 1, batch: 2, state: "waiting" });
    runTo(h, 200 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode)).toMatchObject({ state: "skipped", code: "deferred" });
    // Left in step 2 (3 nodes, 2 upgraded: the sample of 2) it would have been skipped there and the step passed.
    expect({ phase: h.campaign.phase, code: h.campaign.code }).toEqual({
      phase: "completed",
      code: undefined,
    });
  });
});

describe("(holds) without a ramp the carried node is in the current batch", () => {
  it("a later delivery it took is seen and the next batch's breach rolls it back", () => {
    failIds.clear();
    done.clear();
    const h = start(fleet(6), {
      ...ramp,
      ramp: undefined,
      batches: [
        { percent: 50, minDurationMs: 10 * MIN },
        { percent: 100, minDurationMs: 10 * MIN },
      ],
    });
    const busyNode = batchIds(h, 0)[0] as string;
    runTo(h, 10 * MIN, [busyNode]);
    expect(nodeOf(h, busyNode)).toMatchObject({ batch: 1, carriedFrom: 0, state: "waiting" });
    // Busy still at its first re-offer; then it takes a later delivery and is back on the target.
    report(h, busyNode, "RESTARTING");
    reboot(h, busyNode, NEW);
    const [, failing] = batchIds(h, 1) as [string, string];
    failIds.add(failing);
    runTo(h, 40 * MIN, []);
    expect(h.campaign.phase).toBe("rolled_back");
    expect(h.actions.some((a) => a.kind === "rollback" && a.nodeId === busyNode)).toBe(true);
  });
});
