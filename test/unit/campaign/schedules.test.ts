/**
 * The rules of maintenance windows, exponential ramps and outside health gates: the pure
 * functions table by table (`decide` with each of them: schedules-decide.test.ts).
 */
import { describe, expect, it } from "vitest";
import {
  closedMsBetween,
  type GateResult,
  gateFails,
  judgePrometheusAnswer,
  nextWindowChange,
  parseGate,
  parseRamp,
  parseWindow,
  planCampaign,
  rampSizes,
  resolveSpec,
  windowOpen,
} from "../../../control/campaign/index.js";
import { fleet, MIN } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const HOUR = 60 * MIN;
const utc = (y: number, m: number, d: number, h = 0, min = 0) => Date.UTC(y, m - 1, d, h, min);

describe("maintenance windows", () => {
  it.each([
    [
      "Mon-Fri 02:00-04:00 Europe/Berlin",
      { days: [1, 2, 3, 4, 5], startMinute: 120, endMinute: 240, timeZone: "Europe/Berlin" },
    ],
    [
      "22:00-02:00",
      { days: [0, 1, 2, 3, 4, 5, 6], startMinute: 1320, endMinute: 120, timeZone: "UTC" },
    ],
    [
      "Fri-Mon 00:00-24:00 UTC",
      { days: [0, 1, 5, 6], startMinute: 0, endMinute: 1440, timeZone: "UTC" },
    ],
    [
      "weekends 10:30-11:00 America/New_York",
      { days: [0, 6], startMinute: 630, endMinute: 660, timeZone: "America/New_York" },
    ],
  ])("parses %s", (text, window) => {
    expect(parseWindow(text)).toEqual({ ok: true, window });
  });

  it.each([
    ["Mon-Fri", "no HH:MM-HH:MM span"],
    ["Funday 02:00-03:00", '"Funday" is not a day'],
    ["02:00-02:00", "the span has no length"],
    ["02:00-04:61", '"04:61" is not a time'],
    ["02:00-04:00 Nowhere/Land", '"Nowhere/Land" is not a time zone'],
    ["Mon 02:00-04:00 UTC extra", "unexpected words"],
  ])("refuses %s, saying why", (text, why) => {
    const p = parseWindow(text);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.message).toContain(why);
  });

  // 2026-12-01 is a Tuesday; Berlin is UTC+1 in winter, UTC+2 from 2026-03-29 01:00 UTC.
  it.each([
    [
      "is closed before a weekday window opens",
      ["Mon-Fri 02:00-04:00 Europe/Berlin"],
      utc(2026, 12, 1, 0, 30),
      false,
      utc(2026, 12, 1, 1),
    ],
    [
      "is open inside it, closing at its end",
      ["Mon-Fri 02:00-04:00 Europe/Berlin"],
      utc(2026, 12, 1, 1, 30),
      true,
      utc(2026, 12, 1, 3),
    ],
    [
      "skips the weekend to Monday's opening",
      ["Mon-Fri 02:00-04:00 Europe/Berlin"],
      utc(2026, 12, 4, 3),
      false,
      utc(2026, 12, 7, 1),
    ],
    [
      "follows daylight saving time to the zone's new offset",
      ["daily 01:00-05:00 Europe/Berlin"],
      utc(2026, 3, 29, 0, 30),
      true,
      utc(2026, 3, 29, 3),
    ],
    [
      "stays open past midnight for a span that crosses it",
      ["Tue 22:00-02:00 UTC"],
      utc(2026, 12, 2, 1),
      true,
      utc(2026, 12, 2, 2),
    ],
    [
      "merges overlapping windows into one opening",
      ["01:00-03:00", "02:00-04:00"],
      utc(2026, 12, 1, 2, 30),
      true,
      utc(2026, 12, 1, 4),
    ],
  ])("%s", (_name, texts, t, open, change) => {
    const ws = windowsOf(...texts);
    expect(windowOpen(ws, t)).toBe(open);
    expect(nextWindowChange(ws, t)).toBe(change);
  });

  it("is always open without windows, with no change to wait for", () => {
    expect(windowOpen([], 123)).toBe(true);
    expect(nextWindowChange(undefined, 123)).toBeUndefined();
    expect(closedMsBetween([], 0, HOUR)).toBe(0);
  });

  it("counts the closed time between two instants", () => {
    const ws = windowsOf("01:00-02:00", "03:00-05:00");
    expect(closedMsBetween(ws, utc(2026, 12, 1), utc(2026, 12, 2))).toBe(21 * HOUR);
    expect(closedMsBetween(ws, utc(2026, 12, 1, 1, 30), utc(2026, 12, 1, 3, 30))).toBe(HOUR);
  });
});

describe("exponential ramps", () => {
  it.each([
    ["10/min×2", { startPerMinute: 10, factor: 2 }],
    ["10/min x 1.5", { startPerMinute: 10, factor: 1.5 }],
    ["30/h", { startPerMinute: 0.5, factor: 2 }],
    ["2/s*3", { startPerMinute: 120, factor: 3 }],
  ])("parses %s", (text, value) => {
    expect(parseRamp(text)).toEqual({ ok: true, value });
  });

  it.each([["10/day×2"], ["0/min×2"], ["10/min×0.9"], ["10/min×2×2"], ["fast"]])(
    "refuses %s",
    (text) => {
      expect(parseRamp(text).ok).toBe(false);
    },
  );

  it.each([
    [
      "doubles each step until every node is taken",
      100,
      { startPerMinute: 1, factor: 2, maxPerMinute: 0, stepMs: MIN },
      100,
      [1, 2, 4, 8, 16, 32, 37],
    ],
    [
      "stops growing at its maximum",
      30,
      { startPerMinute: 2, factor: 3, maxPerMinute: 7, stepMs: MIN },
      100,
      [2, 6, 7, 7, 7, 1],
    ],
    [
      "sizes a step by its length",
      50,
      { startPerMinute: 2, factor: 2, maxPerMinute: 0, stepMs: 5 * MIN },
      100,
      [10, 20, 20],
    ],
    [
      "caps the first step at the canary share",
      1000,
      { startPerMinute: 100, factor: 2, maxPerMinute: 0, stepMs: MIN },
      5,
      [50, 200, 400, 350],
    ],
    [
      "takes one node per step at least, however slow",
      3,
      { startPerMinute: 0.1, factor: 1, maxPerMinute: 0, stepMs: MIN },
      100,
      [1, 1, 1],
    ],
  ])("%s", (_name, total, ramp, firstMax, sizes) => {
    expect(rampSizes(total, ramp, firstMax)).toEqual(sizes);
  });

  it("plans one batch per step, each lasting the step", () => {
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      ramp: { startPerMinute: 1, factor: 2, stepMs: 2 * MIN },
    });
    const plan = planCampaign(spec, fleet(20), 100);
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([2, 4, 8, 6]);
    expect(plan.batches.map((b) => b.minDurationMs)).toEqual([2 * MIN, 2 * MIN, 2 * MIN, 2 * MIN]);
    expect(plan.batches.map((b) => b.percent)).toEqual([10, 30, 70, 100]);
  });
});

describe("outside health gates", () => {
  it.each([
    [
      "prometheus http://prom:9090 up",
      { kind: "prometheus", url: "http://prom:9090", query: "up" },
    ],
    [
      "prometheus http://prom:9090 sum(rate(e[5m])) by (job) < 0.05",
      {
        kind: "prometheus",
        url: "http://prom:9090",
        query: "sum(rate(e[5m])) by (job)",
        op: "<",
        value: 0.05,
      },
    ],
    [
      "prometheus https://p/ x >= -1e3",
      { kind: "prometheus", url: "https://p/", query: "x", op: ">=", value: -1000 },
    ],
    ["webhook https://hooks.example/ok", { kind: "webhook", url: "https://hooks.example/ok" }],
  ])("parses %s", (text, gate) => {
    expect(parseGate(text)).toEqual({ ok: true, gate });
  });

  it.each([
    ["prometheus http://p"],
    ["webhook ftp://x"],
    ["webhook http://x extra"],
    ["dns http://x q"],
  ])("refuses %s", (text) => {
    expect(parseGate(text).ok).toBe(false);
  });

  const prom = { kind: "prometheus" as const, url: "http://p", query: "q" };
  const vector = (...values: string[]) => ({
    status: "success",
    data: { resultType: "vector", result: values.map((v) => ({ metric: {}, value: [0, v] })) },
  });
  it.each([
    ["holds on a non-empty result without a comparison", prom, vector("0"), "pass"],
    ["fails on an empty result", prom, vector(), "fail"],
    [
      "holds when every sample satisfies the comparison",
      { ...prom, op: "<" as const, value: 1 },
      vector("0.2", "0.9"),
      "pass",
    ],
    [
      "fails when one sample of several does not",
      { ...prom, op: "<" as const, value: 1 },
      vector("0.2", "3"),
      "fail",
    ],
    [
      "never lets NaN satisfy a comparison",
      { ...prom, op: "!=" as const, value: 1 },
      vector("NaN"),
      "fail",
    ],
    [
      "reads a scalar result",
      { ...prom, op: "==" as const, value: 1 },
      { status: "success", data: { resultType: "scalar", result: [0, "1"] } },
      "pass",
    ],
    [
      "counts an error answer as unreachable",
      prom,
      { status: "error", error: "parse error" },
      "unreachable",
    ],
  ])("%s", (_name, gate, answer, status) => {
    expect(judgePrometheusAnswer(gate, answer).status).toBe(status);
  });

  const r = (status: GateResult["status"], at: number, since?: number): GateResult => ({
    batch: 0,
    gate: 0,
    status,
    at,
    value: "",
    message: "",
    unreachableSince: since,
  });
  it.each([
    ["a failing result fails at once", r("fail", 10), 10, true],
    ["a holding result never fails", r("pass", 10), 10_000, false],
    ["an unreachable gate within its grace does not fail yet", r("unreachable", 50, 10), 69, false],
    ["an unreachable gate fails once its grace is over", r("unreachable", 50, 10), 70, true],
  ])("%s", (_name, result, now, fails) => {
    expect(gateFails(result, 60, now)).toBe(fails);
  });
});
