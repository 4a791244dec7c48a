/**
 * The benchmark's spread of a figure over its repeats, and how its table shows it: the range
 * every pairing of unpaired repeats allows, and `[1 run]` where a figure was measured once.
 */
import { describe, expect, it } from "vitest";
import { spreadText } from "../../../agent-sim/bench/report.js";
import type { BenchRow } from "../../../agent-sim/bench/rows.js";
import { fleetRows, perStreamSamples } from "../../../agent-sim/bench/rows.js";
import { spreadOf, unpairedRatioSpread } from "../../../agent-sim/bench/stats.js";

const row = (over: Partial<BenchRow>): BenchRow => ({
  scenario: "s",
  n: 1000,
  unit: "µs",
  project: 2,
  baseline: 1,
  baselineName: "bare",
  ratio: 2,
  goal: "≤ 1.5×",
  met: false,
  ...over,
});

describe("bench spread", () => {
  it("spreadOf ignores readings that are not finite and counts the rest", () => {
    expect(spreadOf([3, Number.NaN, 1, 2])).toEqual({ min: 1, max: 3, runs: 3 });
    expect(spreadOf([]).runs).toBe(0);
  });

  it("an unpaired ratio ranges from the lowest project over the highest baseline to the reverse", () => {
    // Every pairing: 40/20, 40/25, 50/20, 50/25, 60/20, 60/25 → 1.6 … 3.
    expect(unpairedRatioSpread([50, 40, 60], [25, 20])).toEqual({ min: 1.6, max: 3, runs: 2 });
  });

  it("memory per stream takes every pairing of the empty and the loaded readings", () => {
    const point = (streams: number, vmRss: number[]) => ({
      streams,
      fds: 0,
      memory: { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0, vmRss: 0 },
      samples: { vmRss, heap: vmRss },
    });
    const points = [point(0, [1024 * 100, 1024 * 110]), point(10, [1024 * 300])];
    expect(perStreamSamples(points, 10, "vmRss")).toEqual([20, 19]);
    expect(perStreamSamples(points, 0, "vmRss")).toEqual([]);
  });

  it("the table says the range and the runs, or that the figure was measured once", () => {
    expect(spreadText(row({ spread: { min: 1.71, max: 2.1, runs: 3 } }))).toBe(
      " [1.71–2.10×, 3 runs]",
    );
    expect(spreadText(row({ maxValue: 3, spread: { min: 2.5, max: 3.3, runs: 2 } }))).toBe(
      " [2.50–3.30, 2 runs]",
    );
    expect(spreadText(row({ spread: { min: 2, max: 2, runs: 1 } }))).toBe(" [1 run]");
    expect(spreadText(row({}))).toBe("");
  });

  it("heartbeat CPU counts every window together, a window with a collection as often as it came", () => {
    const memory = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0, vmRss: 0 };
    const load = (target: "control" | "bare", cpu: number[]) => ({
      target,
      points: [{ streams: 1000, fds: 0, memory, samples: { vmRss: [0], heap: [0] } }],
      idleCpuPerSecond: 0,
      // 6,000 heartbeats a window: 0.24 s of CPU is 40 µs per heartbeat.
      cpu: cpu.map((cpuSeconds) => ({ cpuSeconds, wallMs: 6000, heartbeats: 6000 })),
      storms: [],
    });
    // Control: 40 µs in four windows, 80 µs in the one with a collection; bare: 30 µs flat.
    const rows = fleetRows(
      load("control", [0.24, 0.24, 0.48, 0.24, 0.24]),
      load("bare", [0.18, 0.18, 0.18, 0.18, 0.18]),
      { memory: 1.3, cpu: 1.5 },
    );
    const cpu = rows.find((r) => r.scenario.startsWith("heartbeat CPU"));
    // (4 × 0.24 + 0.48) s over 30,000 heartbeats = 48 µs; the median window would say 40.
    expect(cpu?.project).toBeCloseTo(48, 6);
    expect(cpu?.baseline).toBeCloseTo(30, 6);
    expect(cpu?.ratio).toBeCloseTo(1.6, 6);
    expect(cpu?.met).toBe(false);
    // The spread still pairs the windows: 40/30 … 80/30.
    expect(cpu?.spread?.min).toBeCloseTo(4 / 3, 6);
    expect(cpu?.spread?.max).toBeCloseTo(8 / 3, 6);
  });
});
