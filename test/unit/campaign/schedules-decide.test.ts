/**
 * `decide` with maintenance windows, exponential ramps and outside health gates: nothing is
 * offered while every window is closed, a ramp runs as batches of growing size, and a gate
 * holds, fails or goes unreachable on a settled batch.
 */
import { describe, expect, it } from "vitest";
import { applyDecision, decide, type GateResult } from "../../../control/campaign/index.js";
import { recordViolations } from "../../../simulation/record-invariants.js";
import { bringBack, decideWith, fleet, inState, MIN, sent, start } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const HOUR = 60 * MIN;

describe("decide with windows, ramps and gates", () => {
  // The harness starts at t=0: 1970-01-01 00:00 UTC.
  it("offers nothing while every window is closed, wakes at the opening, and offers then", () => {
    const h = start(fleet(4), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      windows: windowsOf("01:00-02:00"),
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    const d = decideWith(h);
    expect(d.actions).toEqual([]);
    expect(d.wakeAt).toBe(HOUR);
    h.now = HOUR;
    expect(decideWith(h).actions.filter((a) => a.kind === "upgrade")).toHaveLength(4);
    expect(recordViolations(h.campaign, h.nodes)).toEqual([]);
  });

  it("judges nodes in flight to the end after the window closes, and counts only open time toward the minimum duration", () => {
    const h = start(fleet(2), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      windows: windowsOf("00:00-00:10", "01:00-02:00"),
      batches: [{ percent: 100, minDurationMs: 20 * MIN }],
    });
    decideWith(h);
    expect(inState(h, "offered")).toHaveLength(2);
    h.now = 15 * MIN; // closed
    bringBack(h, sent(h, "upgrade"));
    decideWith(h);
    expect(inState(h, "verifying")).toHaveLength(2);
    expect(h.campaign.batches[0]?.state).toBe("running");
    h.now = HOUR + 5 * MIN; // 10 + 5 minutes open so far
    expect(decideWith(h).wakeAt).toBe(HOUR + 10 * MIN);
    expect(h.campaign.phase).toBe("running");
    h.now = HOUR + 10 * MIN;
    decideWith(h);
    expect(h.campaign.phase).toBe("completed");
    expect(recordViolations(h.campaign, h.nodes)).toEqual([]);
  });

  it("runs a ramp as batches of growing size, the breach rule applying per step", () => {
    const h = start(fleet(7), {
      ramp: { startPerMinute: 1, factor: 2, stepMs: MIN },
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
    });
    expect(h.campaign.batches.map((b) => b.nodeCount)).toEqual([1, 2, 4]);
    for (const size of [1, 2, 4]) {
      decideWith(h);
      const offered = inState(h, "offered");
      expect(offered).toHaveLength(size);
      bringBack(h, offered);
      decideWith(h);
      h.now += MIN;
    }
    decideWith(h);
    expect(h.campaign.phase).toBe("completed");
    expect(recordViolations(h.campaign, h.nodes)).toEqual([]);
  });

  const gated = (onBreach: "rollback" | "pause" = "rollback") => {
    const h = start(fleet(2), {
      disruptionBudgetPercent: 100,
      configGraceMs: 0,
      gates: [{ kind: "webhook", url: "http://hook" }],
      gateGraceMs: MIN,
      onBreach,
      batches: [{ percent: 100, minDurationMs: 0 }],
    });
    decideWith(h);
    h.now = 10_000;
    bringBack(h, sent(h, "upgrade"));
    decideWith(h);
    return h;
  };
  const result = (status: GateResult["status"], at: number, since?: number): GateResult => ({
    batch: 0,
    gate: 0,
    status,
    at,
    value: status === "pass" ? "HTTP 200" : "HTTP 503",
    message: status,
    unreachableSince: since,
  });

  it("keeps a settled batch running until its gate holds, then passes it with the evidence", () => {
    const h = gated();
    expect(h.campaign.batches[0]?.settledAt).toBe(10_000);
    expect(h.campaign.phase).toBe("running");
    h.now = 11_000;
    decideWith(h, [result("pass", 9_000)]); // taken before the batch settled: does not count
    expect(h.campaign.phase).toBe("running");
    const d = decideWith(h, [result("pass", 11_000)]);
    expect(h.campaign.phase).toBe("completed");
    expect(h.campaign.batches[0]?.gateEvidence).toEqual([
      { gate: 0, at: 11_000, value: "HTTP 200" },
    ]);
    expect(d.events).toContainEqual(expect.objectContaining({ kind: "gate", status: "pass" }));
  });

  it("rolls the batch back when its gate fails, recording the gate's value", () => {
    const h = gated();
    h.now = 12_000;
    const d = decideWith(h, [result("fail", 12_000)]);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.message).toContain("gate 1 (webhook http://hook/…) of batch 1 failed");
    expect(d.events).toContainEqual(
      expect.objectContaining({ kind: "gate", status: "fail", value: "HTTP 503" }),
    );
    expect(d.events).toContainEqual(expect.objectContaining({ kind: "breached", gate: 0 }));
    expect(sent(h, "rollback").sort()).toEqual(["node-000", "node-001"]);
  });

  it("waits out an unreachable gate's grace, then counts it as failing", () => {
    const h = gated();
    h.now = 30_000;
    const d = decideWith(h, [result("unreachable", 30_000, 20_000)]);
    expect(h.campaign.phase).toBe("running");
    expect(d.wakeAt).toBe(80_000);
    h.now = 80_000;
    decideWith(h, [result("unreachable", 30_000, 20_000)]);
    expect(h.campaign.phase).toBe("rolling_back");
    expect(h.campaign.message).toContain("unreachable for 60 s");
  });

  it("after a resume, accepts the gate results it paused on and breaches only on a later failure", () => {
    const h = gated("pause");
    h.now = 12_000;
    decideWith(h, [result("fail", 12_000)]);
    expect(h.campaign.phase).toBe("paused");
    h.now = 20_000;
    const resumed = decide({
      campaign: h.campaign,
      nodes: h.nodes,
      facts: h.facts,
      now: h.now,
      target: h.target,
      commands: [{ kind: "resume" }],
      gates: [result("fail", 12_000)],
    });
    h.campaign = applyDecision(h.campaign, h.nodes, resumed).campaign;
    expect(h.campaign.phase).toBe("running");
    h.now = 25_000;
    decideWith(h, [result("fail", 25_000)]);
    expect(h.campaign.phase).toBe("paused");
  });
});
