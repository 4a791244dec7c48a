/**
 * An unacknowledged confirm of a release yanked since is not re-sent: confirming would raise
 * the Agent's confirmed floor to a release the operator declared unfit (`worthResending`,
 * resend-rules.ts). Found by the engine review (R14): the outbox re-sent confirms unguarded.
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { NEW, world } from "./worker-world.js";

describe("an unacknowledged confirm of a release yanked since", () => {
  it("is not re-sent after the yank", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"], { disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.RESTARTING);
    w.gateway.disconnect("n1");
    w.clock.advance(1000);
    w.gateway.connect("n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    // The batch passed: the confirm went onto n1's stream, which died before n1 processed it.
    const confirms = () => w.gateway.sent.filter((s) => s.kind === "agentConfirm");
    const beforeYank = confirms().length;
    expect(beforeYank).toBeGreaterThan(0);
    w.gateway.disconnect("n1");
    w.store.yankRelease({ version: NEW, at: w.clock.ms, by: "alice", reason: "data loss bug" });
    w.clock.advance(60_000);
    w.gateway.connect("n1", "b1", NEW);
    w.clock.advance(100);
    await worker.step();
    expect(confirms().length).toBe(beforeYank);
  });
});
