/**
 * The campaign worker reads the yanks of its nodes' previous releases with its target's and
 * hands them to the engine: a breach never sends a node back onto a yanked release.
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { OLD, world } from "./worker-world.js";

const MIN = 60_000;

describe("the campaign worker's rollback onto a yanked release", () => {
  it("withholds it: the node still upgrading ends failed rollback_withheld and is sent no rollback", async () => {
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
    w.store.yankRelease({
      version: OLD,
      at: w.clock.ms,
      by: "alice",
      reason: "corrupts the cache",
    });
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.REFUSED);
    w.clock.advance(100);
    await worker.step();
    const node = (id: string) => w.nodesOf("c1").find((n) => n.nodeId === id);
    expect(node("n1")).toMatchObject({ state: "failed", code: "rejected" });
    expect(node("n2")).toMatchObject({
      state: "failed",
      code: "rollback_withheld",
      rollbackResult: "rollback_withheld",
    });
    expect(w.gateway.sent.map((s) => s.kind)).not.toContain("agentRollback");
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("rolled_back");
    expect(w.store.tables.campaigns.get("c1")?.campaign.message).toContain(
      "rollback withheld from 1 node(s)",
    );
  });
});
