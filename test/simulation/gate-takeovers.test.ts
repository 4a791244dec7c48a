/**
 * G3 and G4 on hand-built campaigns and simulated gates: each breaks when a breach or a pass
 * contradicts the gate scripts' ground truth, and holds when it does not.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../control/manual-clock.js";
import {
  stalePassViolations,
  unreachableBreachViolations,
} from "../../simulation/gate-takeovers.js";
import type { GateScript } from "../../simulation/schedules.js";
import { SimGates } from "../../simulation/sim-gates.js";

const GRACE = 60_000;
const context = (batch: number) => ({ campaignId: "c0", batch, gate: 0, targetVersion: "2.0.0" });

function breached(message: string) {
  return {
    id: "c0",
    message,
    spec: { gates: [{}], gateGraceMs: GRACE },
    batches: [{ index: 0, state: "breached" }],
  };
}

function passed(endedAt: number, settledAt = 1000) {
  return {
    id: "c0",
    spec: { gates: [{}] },
    batches: [{ index: 0, state: "passed", nodeCount: 3, settledAt, endedAt }],
  };
}

const UNREACHABLE = "gate 1 (gate.sim) of batch 1 failed: unreachable for 95 s (grace 60 s): x";

describe("G3: a breach on an unreachable gate needs a gate unreachable for its grace", () => {
  it("breaks when the only gate was unreachable for a quarter of the grace", () => {
    const script: GateScript = { kind: "unreachable_in", batch: 0, forMs: GRACE / 4 };
    const gates = new SimGates(new ManualClock(0), new Map([["c0", [script]]]));
    const out = unreachableBreachViolations(gates, [breached(UNREACHABLE)], new Set());
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^G3: c0 batch 1 breached on an unreachable gate/);
  });

  it("holds when the gate was unreachable for longer than the grace, or the breach was not on one", () => {
    const long: GateScript = { kind: "unreachable_in", batch: 0, forMs: GRACE * 4 };
    const gates = new SimGates(new ManualClock(0), new Map([["c0", [long]]]));
    expect(unreachableBreachViolations(gates, [breached(UNREACHABLE)], new Set())).toEqual([]);
    const short: GateScript = { kind: "unreachable_in", batch: 0, forMs: GRACE / 4 };
    const other = new SimGates(new ManualClock(0), new Map([["c0", [short]]]));
    const byNodes = breached("2 of 3 nodes of batch 1 failed (threshold 0 %)");
    expect(unreachableBreachViolations(other, [byNodes], new Set())).toEqual([]);
  });

  it("judges each breached batch once", () => {
    const script: GateScript = { kind: "unreachable_in", batch: 0, forMs: GRACE / 4 };
    const gates = new SimGates(new ManualClock(0), new Map([["c0", [script]]]));
    const seen = new Set<string>();
    expect(unreachableBreachViolations(gates, [breached(UNREACHABLE)], seen)).toHaveLength(1);
    expect(unreachableBreachViolations(gates, [breached(UNREACHABLE)], seen)).toEqual([]);
  });
});

describe("G4: a batch passes only on a holding answer given since its leader's lease began", () => {
  it("breaks when the only holding answer came before the lease epoch that passed it", async () => {
    const clock = new ManualClock(0);
    const gates = new SimGates(clock, new Map());
    clock.advanceTo(40_000);
    await gates.evaluate({}, context(0));
    const out = stalePassViolations(gates, [passed(100_000)], 50_000, new Set());
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(
      /^G4: c0 batch 1 passed at 100000, but gate 1 gave it no holding answer/,
    );
  });

  it("breaks when the only holding answers after the lease were for another batch", async () => {
    const clock = new ManualClock(0);
    const gates = new SimGates(clock, new Map());
    clock.advanceTo(60_000);
    await gates.evaluate({}, context(1));
    expect(stalePassViolations(gates, [passed(100_000)], 50_000, new Set())).toHaveLength(1);
  });

  it("holds with a holding answer since the lease began, within the batch", async () => {
    const clock = new ManualClock(0);
    const gates = new SimGates(clock, new Map());
    clock.advanceTo(60_000);
    await gates.evaluate({}, context(0));
    expect(stalePassViolations(gates, [passed(100_000)], 50_000, new Set())).toEqual([]);
  });

  it("a failing gate scripted to fail from a time answers slowly and never as holding", async () => {
    const clock = new ManualClock(0);
    const script: GateScript = { kind: "fail_from", batch: 0, passMs: 10_000, slowMs: 8000 };
    const gates = new SimGates(clock, new Map([["c0", [script]]]));
    expect((await gates.evaluate({}, context(0))).status).toBe("pass");
    clock.advanceTo(10_000);
    const answer = gates.evaluate({}, context(0));
    clock.advanceTo(18_000);
    expect((await answer).status).toBe("fail");
    expect(gates.failures.map((f) => f.at)).toEqual([18_000]);
    expect(gates.passes.map((p) => p.at)).toEqual([0]);
  });
});
