/**
 * Late rollbacks through the worker (docs/decisions.md, "Late rollbacks are admitted under their
 * pool's disruption budget"): an agent that reported FAILED apply_failed yet restarted into the
 * target, and says Hello on it after its campaign finished rolled_back, is sent the campaign's
 * rollback then (known defect 33: it never was, and the campaign said rolled_back while it ran
 * the target); and only while its pool has room, holding a slot of it once delivered, so no
 * other campaign offers over it (known defect 34).
 */
import { describe, expect, it } from "vitest";
import { CAMPAIGNS_CHANNEL } from "../../../control/shared/notify-channels.js";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, OLD, world } from "./worker-world.js";

/** The node's stream opens on `version` after its Hello was recorded (as the hub does). */
function helloOn(w: ReturnType<typeof world>, nodeId: string, boot: string, version: string) {
  const row = w.store.tables.registry.get(nodeId);
  if (row !== undefined) w.store.putNode({ ...row, boot_id: boot, agent_version: version });
  w.gateway.connect(nodeId, boot, version);
}

describe("a late rollback", () => {
  it("reaches an agent that said FAILED and says Hello on the target after its campaign finished", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], { failureThresholdPercent: 0, disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    // The agent says its apply failed, yet restarts into the target.
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.FAILED);
    w.gateway.disconnect("n1");
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(100);
    await worker.step();
    const c1 = w.store.tables.campaigns.get("c1")?.campaign;
    expect(c1?.phase).toBe("rolled_back");
    expect(c1?.finishedAt).toBeDefined();
    const before = w.gateway.sent.length;
    // Its Hello on the target arrives: it is sent the campaign's rollback, onto its previous release.
    w.clock.advance(1000);
    helloOn(w, "n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    const rollbacks = w.gateway.sent
      .slice(before)
      .filter((s) => s.nodeId === "n1" && s.kind === "agentRollback");
    expect(rollbacks.map((s) => s.id)).toEqual(["c1/n1/rollback"]);
  });

  it("is not sent to an agent that says Hello on its previous release", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], { failureThresholdPercent: 0, disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.FAILED);
    w.gateway.disconnect("n1");
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(100);
    await worker.step();
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("rolled_back");
    const before = w.gateway.sent.length;
    w.clock.advance(1000);
    helloOn(w, "n1", "b1", OLD);
    for (let i = 0; i < 3; i++) {
      w.clock.advance(60_000);
      await worker.step();
    }
    expect(w.gateway.sent.slice(before).filter((s) => s.kind === "agentRollback")).toEqual([]);
  });

  it("holds its pool's slot once delivered: another campaign offers in the pool only after the agent is back", async () => {
    // Pool "p" of 10 nodes: a budget of 1 at 5 %.
    const ids = Array.from({ length: 10 }, (_, i) => `n${i}`);
    const w = world(ids, () => "p");
    w.gateway.connect("n0");
    await w.start("c1", ["n0"], { failureThresholdPercent: 0, disruptionBudgetPercent: 5 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n0", "c1/n0/upgrade", OperationPhase.FAILED);
    w.gateway.disconnect("n0");
    w.clock.advance(100);
    await worker.step();
    w.clock.advance(100);
    await worker.step();
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("rolled_back");
    // n0 comes back on the target: its late rollback is delivered, and holds the pool's slot.
    w.clock.advance(1000);
    helloOn(w, "n0", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    expect(w.gateway.sent.filter((s) => s.id === "c1/n0/rollback")).toHaveLength(1);
    // Another campaign over n1 in the same pool offers nothing while n0 rolls back.
    w.gateway.connect("n1");
    w.clock.advance(1000);
    await w.start("c2", ["n1"], { disruptionBudgetPercent: 5 });
    await w.store.notify(CAMPAIGNS_CHANNEL, ["c2"]);
    w.clock.advance(100);
    await worker.step();
    expect(w.nodesOf("c2").find((n) => n.nodeId === "n1")?.state).toBe("waiting");
    // n0 is back on its previous release: the slot frees and n1 is offered.
    w.gateway.report("n0", "c1/n0/rollback", OperationPhase.REINSTATED);
    w.gateway.disconnect("n0");
    helloOn(w, "n0", "b2", OLD);
    w.clock.advance(5000);
    await worker.step();
    w.clock.advance(5000);
    await worker.step();
    expect(w.nodesOf("c2").find((n) => n.nodeId === "n1")?.state).toBe("offered");
  });
});
