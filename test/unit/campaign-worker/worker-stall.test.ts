/**
 * The progress deadline through the worker, on the manual clock: a campaign that goes without
 * a node or batch change for its deadline gets one `campaign.stalled` audit row per stall and
 * is reported stalled to the observer (the metric), and nothing else about it changes.
 */
import { describe, expect, it } from "vitest";
import type { WorkerObserver } from "../../../control/campaign-worker/observer.js";
import { NEW, world } from "./worker-world.js";

const MIN = 60_000;

/** Steps the worker every 5 s (its periodic pass) until `ms` have passed. */
async function run(w: ReturnType<typeof world>, worker: { step(): Promise<unknown> }, ms: number) {
  for (let t = 0; t < ms; t += 5000) {
    w.clock.advance(5000);
    await worker.step();
  }
}

function observed() {
  const stalled = new Map<string, boolean>();
  const observer: WorkerObserver = {
    decided: () => {},
    leading: () => {},
    stalled: (id, now) => stalled.set(id, now),
  };
  return { stalled, observer };
}

describe("the progress deadline in the worker", () => {
  it("reports a campaign without progress past its deadline once, by an audit row and the observer, and changes nothing else", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      configGraceMs: 0,
      progressDeadlineMs: 2 * MIN,
    });
    const { stalled, observer } = observed();
    const worker = w.worker("w1", observer);
    worker.listen();
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["offered"]);
    // Back on the target: the last progress (a node state change) is now.
    w.clock.advance(1000);
    w.gateway.disconnect("n1");
    w.gateway.connect("n1", "b1", NEW);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["verifying"]);
    const stalls = () => w.store.tables.audits.filter((a) => a.action === "campaign.stalled");

    await run(w, worker, 2 * MIN - 5000);
    expect(stalls()).toEqual([]);
    expect(stalled.get("c1")).toBe(false);

    await run(w, worker, 5000);
    expect(stalls()).toHaveLength(1);
    expect(stalls()[0]).toMatchObject({
      actor: "control",
      campaignId: "c1",
      message:
        "campaign c1: no progress for 2 min (progress deadline 2 min) in batch 1, phase running; see agentctl campaign why c1",
    });
    expect(stalled.get("c1")).toBe(true);

    // Still stalled minutes later: still one row; the campaign runs on as it would.
    await run(w, worker, 10 * MIN);
    expect(stalls()).toHaveLength(1);
    expect(stalled.get("c1")).toBe(true);
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("running");

    // The minimum duration over, the batch passes and the campaign completes: no longer stalled.
    await run(w, worker, 20 * MIN);
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("completed");
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["succeeded"]);
    expect(stalled.get("c1")).toBe(false);
    expect(stalls()).toHaveLength(1);
  });

  it("reports nothing over a batch's minimum duration under the default deadline", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      configGraceMs: 0,
    });
    const { stalled, observer } = observed();
    const worker = w.worker("w1", observer);
    worker.listen();
    await worker.step();
    w.gateway.disconnect("n1");
    w.gateway.connect("n1", "b1", NEW);
    await run(w, worker, 31 * MIN);
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("completed");
    expect(w.store.tables.audits.filter((a) => a.action === "campaign.stalled")).toEqual([]);
    expect([...stalled.values()].some(Boolean)).toBe(false);
  });
});
