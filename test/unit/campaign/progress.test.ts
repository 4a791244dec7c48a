/**
 * The progress deadline's pure rules: the default deadline of a spec, and when a campaign
 * counts as stalled (running or rolling back, open window time only, never while paused).
 */
import { describe, expect, it } from "vitest";
import {
  defaultProgressDeadlineMs,
  parseGate,
  progressStall,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { bringBack, fleet, inState, MIN, NEW, start, tick } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const gate = parseGate("webhook http://hooks:8080/ok");
if (!gate.ok) throw new Error(gate.message);

describe("the default progress deadline", () => {
  it.each([
    ["defaults: 30-minute batches, 10-minute reconnects", {}, 50 * MIN],
    [
      "the longest batch, plus soak",
      {
        batches: [
          { percent: 5, minDurationMs: 10 * MIN },
          { percent: 100, minDurationMs: 45 * MIN },
        ],
        soakMs: 5 * MIN,
        reconnectTimeoutMs: 2 * MIN,
      },
      54 * MIN,
    ],
    [
      "a ramp's step, plus the gates' grace",
      {
        ramp: { startPerMinute: 1, factor: 2, stepMs: 20 * MIN },
        gates: [gate.gate],
        gateGraceMs: 3 * MIN,
        reconnectTimeoutMs: MIN,
      },
      25 * MIN,
    ],
  ])("%s", (_, input, expected) => {
    expect(defaultProgressDeadlineMs(resolveSpec({ targetVersion: NEW, ...input }))).toBe(expected);
  });
});

describe("a stall", () => {
  const settled = (spec: Parameters<typeof start>[1]) => {
    const h = start(fleet(1), { configGraceMs: 0, ...spec });
    tick(h);
    bringBack(h, inState(h, "offered"));
    tick(h);
    return h;
  };

  it("starts at the deadline after the last node state change, not before", () => {
    const h = settled({
      batches: [{ percent: 100, minDurationMs: 60 * MIN }],
      progressDeadlineMs: 5 * MIN,
    });
    expect(progressStall(h.campaign, h.nodes, 5 * MIN - 1)).toBeUndefined();
    expect(progressStall(h.campaign, h.nodes, 5 * MIN)).toEqual({
      since: 0,
      stalledMs: 5 * MIN,
      deadlineMs: 5 * MIN,
    });
  });

  it("never counts while the campaign is paused", () => {
    const h = settled({
      batches: [{ percent: 100, minDurationMs: 60 * MIN }],
      progressDeadlineMs: 5 * MIN,
    });
    h.now = MIN;
    tick(h, [{ kind: "pause" }]);
    expect(progressStall(h.campaign, h.nodes, 50 * MIN)).toBeUndefined();
  });

  it("does not count time outside the campaign's windows", () => {
    // 00:00-01:00 UTC open, t=0 is 00:00: closed from 01:00 on.
    const h = settled({
      windows: windowsOf("00:00-01:00"),
      batches: [{ percent: 100, minDurationMs: 120 * MIN }],
      progressDeadlineMs: 90 * MIN,
    });
    expect(progressStall(h.campaign, h.nodes, 10 * 60 * MIN)).toBeUndefined();
    // The next day's window: 60 + 30 open minutes.
    expect(progressStall(h.campaign, h.nodes, 24 * 60 * MIN + 30 * MIN)?.stalledMs).toBe(90 * MIN);
  });

  it("is never reported for an ended campaign", () => {
    const h = settled({ batches: [{ percent: 100, minDurationMs: 0 }], progressDeadlineMs: MIN });
    expect(h.campaign.phase).toBe("completed");
    expect(progressStall(h.campaign, h.nodes, 60 * MIN)).toBeUndefined();
  });
});
