/**
 * An operator's skip of an outside health gate: the gate counts as holding for the current
 * batch only (it neither breaches nor holds that batch back), the next batch evaluates it
 * again, and a skip that cannot apply is refused with its reason and changes nothing.
 */
import { describe, expect, it } from "vitest";
import {
  type AdminCommand,
  commandError,
  type GateResult,
} from "../../../control/campaign/index.js";
import { batchIds, bringBack, decideWith, fleet, type Harness, MIN, start } from "./harness.js";

/**
 * Two nodes, one per batch, with two webhook gates (grace 10 minutes) and `onBreach`; the
 * first batch's node is back at 10 s, so the batch has settled.
 */
function gated(onBreach: "rollback" | "pause" = "rollback"): Harness {
  const h = start(fleet(2), {
    disruptionBudgetPercent: 100,
    configGraceMs: 0,
    gates: [
      { kind: "webhook", url: "http://hook-a" },
      { kind: "webhook", url: "http://hook-b" },
    ],
    gateGraceMs: 10 * MIN,
    onBreach,
    batches: [
      { percent: 50, minDurationMs: 0 },
      { percent: 100, minDurationMs: 0 },
    ],
  });
  decideWith(h, []);
  h.now = 10_000;
  bringBack(h, batchIds(h, 0));
  decideWith(h, []);
  expect(h.campaign.batches[0]?.settledAt).toBe(10_000);
  return h;
}

const result = (
  batch: number,
  gate: number,
  status: GateResult["status"],
  at: number,
): GateResult => ({
  batch,
  gate,
  status,
  at,
  value: status === "pass" ? "HTTP 200" : "HTTP 503",
  message: status,
  unreachableSince: status === "unreachable" ? at : undefined,
});

const skip = (gate: number): AdminCommand => ({ kind: "skip_gate", gate, reason: "hook-a down" });

describe("skipping a gate", () => {
  it("passes the current batch on the other gates' results, and the next batch evaluates it again", () => {
    const h = gated();
    h.now = 20_000;
    // Gate 1 unreachable within its grace, gate 2 holds: the batch waits for gate 1.
    const waiting = [result(0, 0, "unreachable", 20_000), result(0, 1, "pass", 20_000)];
    decideWith(h, waiting);
    expect(h.campaign.batches[0]?.state).toBe("running");

    h.now = 30_000;
    const d = decideWith(h, waiting, [skip(0)]);
    expect(d.events).toContainEqual({ kind: "command_applied", command: skip(0) });
    expect(h.campaign.batches[0]).toMatchObject({
      state: "passed",
      skippedGates: [0],
      gateEvidence: [
        { gate: 0, at: 30_000, value: "skipped by an operator", skipped: true },
        { gate: 1, at: 20_000, value: "HTTP 200" },
      ],
    });
    expect(h.campaign.currentBatch).toBe(1);
    expect(h.campaign.batches[1]?.skippedGates).toBeUndefined();

    // Batch 2: gate 2 holds, gate 1 has no result yet: it waits; gate 1 failing breaches it.
    h.now = 40_000;
    bringBack(h, batchIds(h, 1));
    decideWith(h, []);
    h.now = 50_000;
    decideWith(h, [result(1, 1, "pass", 50_000)]);
    expect(h.campaign.batches[1]?.state).toBe("running");
    h.now = 60_000;
    decideWith(h, [result(1, 0, "fail", 60_000), result(1, 1, "pass", 60_000)]);
    expect(h.campaign.batches[1]?.state).toBe("breached");
    expect(h.campaign.message).toContain("gate 1 (webhook http://hook-a/…) of batch 2 failed");
  });

  it("a failing result of a skipped gate does not breach the batch", () => {
    const h = gated();
    h.now = 20_000;
    decideWith(h, [result(0, 0, "fail", 15_000)], [skip(0)]);
    expect(h.campaign.phase).toBe("running");
    expect(h.campaign.batches[0]?.state).toBe("running");
    h.now = 25_000;
    decideWith(h, [result(0, 0, "fail", 25_000), result(0, 1, "pass", 25_000)]);
    expect(h.campaign.batches[0]?.state).toBe("passed");
  });

  it("does not pass the batch before its other gates hold", () => {
    const h = gated();
    h.now = 20_000;
    decideWith(h, [], [skip(1)]);
    expect(h.campaign.batches[0]).toMatchObject({ state: "running", skippedGates: [1] });
    h.now = 25_000;
    decideWith(h, [result(0, 0, "unreachable", 25_000)]);
    expect(h.campaign.batches[0]?.state).toBe("running");
    h.now = 26_000;
    decideWith(h, [result(0, 0, "pass", 26_000)]);
    expect(h.campaign.batches[0]?.state).toBe("passed");
  });

  it("after a gate's breach paused the campaign, skipping it and resuming passes the batch", () => {
    const h = gated("pause");
    h.now = 20_000;
    const failing = [result(0, 0, "fail", 20_000), result(0, 1, "pass", 20_000)];
    decideWith(h, failing);
    expect(h.campaign.phase).toBe("paused");
    h.now = 30_000;
    decideWith(h, failing, [skip(0)]);
    expect(h.campaign).toMatchObject({ phase: "paused" });
    expect(h.campaign.batches[0]?.state).toBe("breached");
    h.now = 40_000;
    decideWith(h, [...failing, result(0, 1, "pass", 40_000)], [{ kind: "resume" }]);
    h.now = 41_000;
    decideWith(h, [result(0, 0, "fail", 41_000), result(0, 1, "pass", 41_000)]);
    expect(h.campaign.batches[0]?.state).toBe("passed");
    expect(h.campaign.phase).toBe("running");
  });

  it.each<[string, (h: Harness) => void, AdminCommand, string]>([
    [
      "a gate the campaign does not have",
      () => {},
      skip(2),
      "has gates 1 to 2; there is no gate 3",
    ],
    ["a negative gate", () => {}, skip(-1), "there is no gate 0"],
    ["a fractional gate", () => {}, skip(0.5), "there is no gate 1.5"],
    [
      "a gate already skipped for the batch",
      (h) => decideWith(h, [], [skip(0)]),
      skip(0),
      "gate 1 is already skipped for batch 1",
    ],
    [
      "a finished campaign",
      (h) => decideWith(h, [], [{ kind: "abort", rollback: false }]),
      skip(0),
      "is aborted; a gate can be skipped only in a running or paused campaign",
    ],
  ])("refuses %s, saying why, and changes nothing", (_name, setup, command, why) => {
    const h = gated();
    setup(h);
    expect(commandError(h.campaign, command)).toContain(why);
    const before = h.campaign;
    const d = decideWith(h, [], [command]);
    expect(d.events).toContainEqual(expect.objectContaining({ kind: "command_ignored" }));
    expect(h.campaign.batches).toEqual(before.batches);
  });

  it("refuses a campaign without gates", () => {
    const h = start(fleet(1), { batches: [{ percent: 100, minDurationMs: 0 }] });
    decideWith(h, []);
    expect(commandError(h.campaign, skip(0))).toBe("campaign c1 has no gates");
  });
});
