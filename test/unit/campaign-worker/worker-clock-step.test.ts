/**
 * The leader's wall clock stepped forward by more than the reconnect timeout: the nodes in
 * flight were not watched for that time (it did not pass for them), so none of them fails
 * reconnect_timeout at the step; each gets a full reconnect timeout from it, as at a takeover
 * (docs/decisions.md, "One clock for ordering across Controls").
 */
import { describe, expect, it } from "vitest";
import { OperationPhase } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { world } from "./worker-world.js";

const MIN = 60_000;

describe("a leader whose wall clock steps forward past the reconnect timeout", () => {
  it("fails no node in flight at the step, and still times out a silent one a full timeout later", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], {
      disruptionBudgetPercent: 100,
      reconnectTimeoutMs: 10 * MIN,
      failureThresholdPercent: 50,
    });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.DOWNLOADING);
    w.clock.advance(1000);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["applying", "offered"]);
    // The step: the wall clock 15 minutes forward at once, as NTP or an administrator sets it.
    w.clock.stepWall(15 * MIN);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["applying", "offered"]);
    // The nodes say nothing more: watched for a full timeout after the step, both time out.
    const stepAt = w.clock.ms;
    while (w.clock.ms < stepAt + 10 * MIN + 10_000) {
      w.clock.advance(5000);
      await worker.step();
      if (w.clock.ms < stepAt + 10 * MIN)
        expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["applying", "offered"]);
    }
    expect(w.nodesOf("c1").map((n) => n.code)).toEqual(["reconnect_timeout", "reconnect_timeout"]);
  });
});

describe("the manual clock's wall-clock step", () => {
  it("moves now, not the monotonic reading, and ends each sleep after the time it asked for", async () => {
    const { ManualClock } = await import("../../../control/manual-clock.js");
    const clock = new ManualClock(1000);
    let woke = false;
    void clock.sleep(500).then(() => {
      woke = true;
    });
    clock.stepWall(10 * MIN);
    expect(clock.ms).toBe(1000 + 10 * MIN);
    expect(clock.monotonicMs()).toBe(0);
    clock.advance(499);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await Promise.resolve();
    expect(woke).toBe(true);
    expect(clock.monotonicMs()).toBe(500);
  });
});
