/**
 * A rollback never reinstalls a yanked release (docs/decisions.md), also when the release was
 * yanked after the rollback was sent: a node that was offline when its batch breached and
 * comes back after the yank of its previous release is not sent the rollback again
 * (`worthResending`, resend-rules.ts). Found by the engine review (R13): the outbox re-sent a
 * rollback with no yank check.
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, world } from "./worker-world.js";

describe("a rollback onto a release yanked after the rollback was sent", () => {
  it("is not delivered once its release is yanked", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], {
      disruptionBudgetPercent: 100,
      failureThresholdPercent: 0,
      batches: [{ percent: 100, minDurationMs: 3_600_000 }],
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    // n1 takes the upgrade and comes back on 2.0.0.
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.RESTARTING);
    w.gateway.disconnect("n1");
    w.clock.advance(1000);
    w.gateway.connect("n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    expect(w.nodesOf("c1").find((n) => n.nodeId === "n1")?.state).toBe("verifying");
    // n1's stream drops; then n2 fails: the batch breaches, n1 is sent the rollback (not reached).
    w.gateway.disconnect("n1");
    w.clock.advance(1000);
    w.gateway.report("n2", "c1/n2/upgrade", OperationPhase.FAILED);
    w.clock.advance(100);
    await worker.step();
    expect(w.store.tables.campaigns.get("c1")?.campaign.phase).toBe("rolling_back");
    expect(w.nodesOf("c1").find((n) => n.nodeId === "n1")?.state).toBe("rolling_back");
    // The operator yanks 1.0.0 (n1's previous release), then n1 comes back.
    w.store.yankRelease({ version: "1.0.0", at: w.clock.ms, by: "alice", reason: "CVE" });
    w.clock.advance(5000);
    await worker.step();
    const before = w.gateway.sent.length;
    w.clock.advance(60_000);
    w.gateway.connect("n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    const after = w.gateway.sent.slice(before).filter((s) => s.nodeId === "n1");
    expect(after.filter((s) => s.kind === "agentRollback")).toEqual([]);
  });
});
