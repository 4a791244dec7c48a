/**
 * Which gate results a decision may act on: only those taken since the batch settled, since a
 * resume accepted the earlier ones, and since this Control took the lead. An unreachable gate's
 * grace is counted from the latest of those moments, so neither a pause nor Control's own
 * downtime counts as time the gate was unreachable.
 */
import { describe, expect, it } from "vitest";
import type { GateResult } from "../../../control/campaign/index.js";
import { bringBack, decideWith, fleet, type Harness, MIN, sent, start } from "./harness.js";

/** Two nodes in one batch with a webhook gate (grace 1 minute); the batch settles at 10 s. */
function gated(onBreach: "rollback" | "pause" = "rollback"): Harness {
  const h = start(fleet(2), {
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
    gates: [{ kind: "webhook", url: "http://hook" }],
    gateGraceMs: MIN,
    onBreach,
    batches: [{ percent: 100, minDurationMs: 0 }],
  });
  decideWith(h, []);
  h.now = 10_000;
  bringBack(h, sent(h, "upgrade"));
  decideWith(h, []);
  expect(h.campaign.batches[0]?.settledAt).toBe(10_000);
  return h;
}

const result = (status: GateResult["status"], at: number, since?: number): GateResult => ({
  batch: 0,
  gate: 0,
  status,
  at,
  value: status === "pass" ? "HTTP 200" : "HTTP 503",
  message: status,
  unreachableSince: since,
});

describe("resume after a pause on an unreachable gate", () => {
  it("gives the gate a fresh grace from the resume, though its unreachable streak goes on", () => {
    const h = gated("pause");
    h.now = 80_000;
    decideWith(h, [result("unreachable", 80_000, 20_000)]);
    expect(h.campaign.phase).toBe("paused");
    h.now = 90_000;
    decideWith(h, [result("unreachable", 80_000, 20_000)], [{ kind: "resume" }]);
    expect(h.campaign.phase).toBe("running");
    h.now = 91_000;
    const d = decideWith(h, [result("unreachable", 91_000, 20_000)]);
    expect(h.campaign.phase).toBe("running");
    expect(d.wakeAt).toBe(150_000);
    h.now = 149_999;
    decideWith(h, [result("unreachable", 149_999, 20_000)]);
    expect(h.campaign.phase).toBe("running");
    h.now = 150_000;
    decideWith(h, [result("unreachable", 150_000, 20_000)]);
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.message).toContain("unreachable for 60 s");
  });
});

describe("after a takeover, gate evidence gathered before this Control led", () => {
  it("does not pass a batch on a holding result taken before this Control took the lead", () => {
    const h = gated();
    const readyAt = 50_000;
    h.now = 60_000;
    decideWith(h, [result("pass", 40_000)], [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    decideWith(h, [result("pass", 55_000)], [], { readyAt });
    expect(h.campaign.phase).toBe("completed");
    expect(h.campaign.batches[0]?.gateEvidence).toEqual([
      { gate: 0, at: 55_000, value: "HTTP 200" },
    ]);
  });

  it("does not count Control's own downtime as the gate being unreachable", () => {
    const h = gated();
    const readyAt = 5 * MIN;
    h.now = readyAt + 1000;
    const d = decideWith(h, [result("unreachable", readyAt + 1000, 20_000)], [], { readyAt });
    expect(h.campaign.phase).toBe("running");
    expect(d.wakeAt).toBe(readyAt + MIN);
    h.now = readyAt + MIN;
    decideWith(h, [result("unreachable", readyAt + MIN, 20_000)], [], { readyAt });
    expect(h.campaign.phase).toBe("rolling_back");
  });

  it("still breaches on a failing result the previous leader stored and did not act on", () => {
    const h = gated();
    h.now = 6 * MIN;
    decideWith(h, [result("fail", 30_000)], [], { readyAt: 5 * MIN });
    expect(h.campaign.phase).toBe("rolling_back");
  });

  it("does not pass a batch on a holding result older than the batch itself", () => {
    const h = gated();
    h.now = 60_000;
    // A settle time recorded before the batch started (its nodes were final already).
    h.campaign = {
      ...h.campaign,
      batches: h.campaign.batches.map((b) => ({ ...b, startedAt: 40_000, settledAt: 10_000 })),
    };
    decideWith(h, [result("pass", 30_000)]);
    expect(h.campaign.phase).toBe("running");
  });
});
