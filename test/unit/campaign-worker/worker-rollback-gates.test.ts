/**
 * The campaign worker on the memory store, end to end through its gate runner and delivery: a
 * rollback holds the campaign until every node sent one has an outcome, a resume after a pause
 * on an unreachable gate gives that gate a fresh grace, and a leader that took over does not pass
 * a batch on what its nodes ran before the outage.
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, OLD, world } from "./worker-world.js";

const MIN = 60_000;

/** Lets the gate runner's evaluations (promises off the worker's loop) finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

describe("the campaign worker's rollback and gates", () => {
  it("keeps a breached campaign rolling back, its failed node busy, until that node is back on its previous release", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.RESTARTING);
    w.gateway.disconnect("n1");
    w.gateway.disconnect("n2");
    w.gateway.connect("n2", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(10 * MIN);
    await worker.step();
    const phase = () => w.store.tables.campaigns.get("c1")?.campaign.phase;
    const node = (id: string) => w.nodesOf("c1").find((n) => n.nodeId === id);
    expect(node("n1")).toMatchObject({ state: "failed", code: "reconnect_timeout" });
    expect(node("n2")?.state).toBe("rolling_back");
    expect(phase()).toBe("rolling_back");
    w.gateway.report("n2", "c1/n2/rollback", OperationPhase.REINSTATED);
    w.clock.advance(100);
    await worker.step();
    expect(node("n2")?.state).toBe("rolled_back");
    expect(phase()).toBe("rolling_back");
    expect((await w.store.liveCampaignOfNodes(["n1"])).get("n1")).toBe("c1");
    w.gateway.connect("n1", "b1", OLD);
    w.clock.advance(100);
    await worker.step();
    // Back on its previous release, n1 ends the rollback; its campaign finished, the rollback
    // is a late one, sent only to a node on the target (late-rollback.ts): nothing to undo here.
    expect(w.gateway.sent.filter((s) => s.nodeId === "n1").map((s) => s.kind)).toEqual([
      "agentUpgrade",
    ]);
    expect(phase()).toBe("rolled_back");
    expect(node("n1")).toMatchObject({ state: "failed", code: "reconnect_timeout" });
    expect((await w.store.liveCampaignOfNodes(["n1"])).has("n1")).toBe(false);
  });

  it("after a resume from a pause on an unreachable gate, waits a whole grace before pausing again", async () => {
    const unreachable = { evaluate: () => Promise.reject(new Error("connection refused")) };
    const w = world(["n1"], () => "", unreachable);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], {
      configGraceMs: 0,
      gates: [{ kind: "webhook", url: "http://hook" }],
      gateGraceMs: MIN,
      onBreach: "pause",
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.disconnect("n1");
    w.gateway.connect("n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    const phase = () => w.store.tables.campaigns.get("c1")?.campaign.phase;
    const runFor = async (ms: number): Promise<number | undefined> => {
      const from = w.clock.ms;
      while (w.clock.ms - from < ms) {
        w.clock.advance(1000);
        await worker.step();
        await settle();
        if (phase() === "paused") return w.clock.ms - from;
      }
      return undefined;
    };
    expect(await runFor(2 * MIN)).toBeGreaterThanOrEqual(MIN);
    w.store.tables.addCommand({
      campaignId: "c1",
      kind: "resume",
      rollback: false,
      reason: "the monitoring is being fixed",
      actor: "operator",
      actor_ip: "",
    });
    let resumedAt: number | undefined;
    for (let i = 0; i < 10 && resumedAt === undefined; i++) {
      w.clock.advance(1000);
      await worker.step();
      await settle();
      if (phase() === "running") resumedAt = w.clock.ms;
    }
    expect(resumedAt).toBeDefined();
    const pausedAfter = await runFor(2 * MIN);
    expect(pausedAfter).toBeDefined();
    expect(pausedAfter).toBeGreaterThanOrEqual(MIN - 1000);
  });
});

describe("the campaign worker after a takeover", () => {
  it("does not pass a batch on what its nodes ran before the outage: a node that reverted meanwhile breaches it", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], {
      batches: [{ percent: 100, minDurationMs: 30 * MIN }],
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
    });
    const first = w.worker("w1");
    first.listen();
    await first.step();
    for (const id of ["n1", "n2"]) {
      w.gateway.disconnect(id);
      w.gateway.connect(id, "b1", NEW);
    }
    w.clock.advance(100);
    await first.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["verifying", "verifying"]);
    w.clock.advance(20 * MIN);
    await first.step();
    // The leader dies with every stream; n1 reboots on its old release while no Control runs.
    w.store.endSession("w1");
    for (const id of ["n1", "n2"]) w.gateway.disconnect(id);
    w.clock.advance(15 * MIN);
    const second = w.worker("w2");
    second.listen();
    await second.step();
    expect(second.lease.epoch).toBe(2);
    const phase = () => w.store.tables.campaigns.get("c1")?.campaign.phase;
    expect(phase()).toBe("running");
    w.gateway.connect("n2", "b1", NEW);
    w.gateway.connect("n1", "b2", OLD);
    w.clock.advance(100);
    await second.step();
    expect(w.nodesOf("c1").find((n) => n.nodeId === "n1")).toMatchObject({
      state: "failed",
      code: "reverted",
    });
    expect(phase()).toBe("rolling_back");
  });
});
