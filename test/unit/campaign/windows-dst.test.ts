/**
 * Maintenance windows on the days a zone changes its clocks, minute by minute against
 * expectations written by hand: an edge whose wall-clock time the zone skips happens at the
 * first instant after the gap; a window whose span the zone's clock shows twice (clocks set
 * back) is open each time the clock shows it, and closed while the clock shows a time outside
 * it again (docs/decisions.md, "A window reads the wall clock, on daylight-saving days too").
 */
import { describe, expect, it } from "vitest";
import {
  closedMsBetween,
  countedMs,
  nextWindowChange,
  windowOpen,
} from "../../../control/campaign/index.js";
import type { BatchRecord } from "../../../control/campaign/model.js";
import { MIN } from "./harness.js";
import { windowsOf } from "./windows-of.js";

const HOUR = 60 * MIN;
const utc = (y: number, m: number, d: number, h = 0, min = 0) => Date.UTC(y, m - 1, d, h, min);

/** A case: a window, a scan range [from, to), and the open spans in it, [opens, closes). */
interface DstCase {
  readonly window: string;
  readonly from: number;
  readonly to: number;
  readonly open: readonly (readonly [number, number])[];
}

// New York: 2026-03-08 02:00 EST (07:00Z) jumps to 03:00 EDT; 2026-11-01 02:00 EDT (06:00Z)
// falls back to 01:00 EST, so 01:00-01:59 is shown twice (05:00Z-06:00Z, then 06:00Z-07:00Z).
// Berlin: 2026-03-29 02:00 CET (01:00Z) jumps to 03:00 CEST; 2026-10-25 03:00 CEST (01:00Z)
// falls back to 02:00 CET, so 02:00-02:59 is shown twice (00:00Z-01:00Z, then 01:00Z-02:00Z).
const cases: Record<string, DstCase> = {
  "New York spring forward, the closing edge in the gap": {
    window: "daily 01:30-02:30 America/New_York",
    from: utc(2026, 3, 7, 5),
    to: utc(2026, 3, 10, 4),
    open: [
      [utc(2026, 3, 7, 6, 30), utc(2026, 3, 7, 7, 30)], // 01:30-02:30 EST
      [utc(2026, 3, 8, 6, 30), utc(2026, 3, 8, 7)], // 01:30 EST until the gap ends (03:00 EDT)
      [utc(2026, 3, 9, 5, 30), utc(2026, 3, 9, 6, 30)], // 01:30-02:30 EDT
    ],
  },
  "New York spring forward, edges off the quarter hour before the gap": {
    window: "daily 00:37-01:07 America/New_York",
    from: utc(2026, 3, 7, 5),
    to: utc(2026, 3, 10, 4),
    open: [
      [utc(2026, 3, 7, 5, 37), utc(2026, 3, 7, 6, 7)], // 00:37-01:07 EST
      [utc(2026, 3, 8, 5, 37), utc(2026, 3, 8, 6, 7)], // 00:37-01:07 EST, before the gap
      [utc(2026, 3, 9, 4, 37), utc(2026, 3, 9, 5, 7)], // 00:37-01:07 EDT
    ],
  },
  "New York spring forward, the opening edge in the gap": {
    window: "daily 02:15-04:00 America/New_York",
    from: utc(2026, 3, 7, 5),
    to: utc(2026, 3, 10, 4),
    open: [
      [utc(2026, 3, 7, 7, 15), utc(2026, 3, 7, 9)], // 02:15-04:00 EST
      [utc(2026, 3, 8, 7), utc(2026, 3, 8, 8)], // 03:00 EDT (the gap's end) until 04:00 EDT
      [utc(2026, 3, 9, 6, 15), utc(2026, 3, 9, 8)], // 02:15-04:00 EDT
    ],
  },
  "New York fall back, the opening edge in the repeated hour": {
    window: "daily 01:30-02:30 America/New_York",
    from: utc(2026, 10, 31, 4),
    to: utc(2026, 11, 3, 5),
    open: [
      [utc(2026, 10, 31, 5, 30), utc(2026, 10, 31, 6, 30)], // 01:30-02:30 EDT
      // 01:30-02:00 EDT; the repeated 01:00-01:30 (EST) is outside the span; 01:30-02:30 EST.
      [utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6)],
      [utc(2026, 11, 1, 6, 30), utc(2026, 11, 1, 7, 30)],
      [utc(2026, 11, 2, 6, 30), utc(2026, 11, 2, 7, 30)], // 01:30-02:30 EST
    ],
  },
  "New York fall back, the closing edge in the repeated hour": {
    window: "daily 00:30-01:30 America/New_York",
    from: utc(2026, 10, 31, 4),
    to: utc(2026, 11, 3, 5),
    open: [
      [utc(2026, 10, 31, 4, 30), utc(2026, 10, 31, 5, 30)], // 00:30-01:30 EDT
      // 00:30-01:30 EDT, then again while the clock shows 01:00-01:30 a second time (EST).
      [utc(2026, 11, 1, 4, 30), utc(2026, 11, 1, 5, 30)],
      [utc(2026, 11, 1, 6), utc(2026, 11, 1, 6, 30)],
      [utc(2026, 11, 2, 5, 30), utc(2026, 11, 2, 6, 30)], // 00:30-01:30 EST
    ],
  },
  "Berlin spring forward, the opening edge in the gap": {
    window: "daily 02:30-03:30 Europe/Berlin",
    from: utc(2026, 3, 27, 23),
    to: utc(2026, 3, 30, 22),
    open: [
      [utc(2026, 3, 28, 1, 30), utc(2026, 3, 28, 2, 30)], // 02:30-03:30 CET
      [utc(2026, 3, 29, 1), utc(2026, 3, 29, 1, 30)], // 03:00 CEST (the gap's end) to 03:30
      [utc(2026, 3, 30, 0, 30), utc(2026, 3, 30, 1, 30)], // 02:30-03:30 CEST
    ],
  },
  "Berlin spring forward, a window wholly in the gap": {
    window: "daily 02:00-02:45 Europe/Berlin",
    from: utc(2026, 3, 27, 23),
    to: utc(2026, 3, 30, 22),
    open: [
      [utc(2026, 3, 28, 1), utc(2026, 3, 28, 1, 45)], // 02:00-02:45 CET
      // 2026-03-29: both edges fall at 03:00 CEST; the window does not open that day.
      [utc(2026, 3, 30, 0), utc(2026, 3, 30, 0, 45)], // 02:00-02:45 CEST
    ],
  },
  "Berlin fall back, both edges in or after the repeated hour": {
    window: "daily 02:30-03:30 Europe/Berlin",
    from: utc(2026, 10, 23, 22),
    to: utc(2026, 10, 26, 23),
    open: [
      [utc(2026, 10, 24, 0, 30), utc(2026, 10, 24, 1, 30)], // 02:30-03:30 CEST
      // 02:30-03:00 CEST; the repeated 02:00-02:30 (CET) is outside the span; 02:30-03:30 CET.
      [utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1)],
      [utc(2026, 10, 25, 1, 30), utc(2026, 10, 25, 2, 30)],
      [utc(2026, 10, 26, 1, 30), utc(2026, 10, 26, 2, 30)], // 02:30-03:30 CET
    ],
  },
  "Berlin fall back, an overnight window closing in the repeated hour": {
    window: "Sat 23:00-02:30 Europe/Berlin",
    from: utc(2026, 10, 23, 22),
    to: utc(2026, 10, 26, 23),
    // Sat 23:00 CEST to Sunday 02:30 CEST, then again while the clock shows 02:00-02:30 a
    // second time (CET).
    open: [
      [utc(2026, 10, 24, 21), utc(2026, 10, 25, 0, 30)],
      [utc(2026, 10, 25, 1), utc(2026, 10, 25, 1, 30)],
    ],
  },
  // Goose Bay (2009) set its clocks back at 00:01 ADT to 23:01 AST, so Sunday began, then
  // Saturday's last hour came round again.
  "Goose Bay fall back over midnight, a window opening at midnight": {
    window: "Sun 00:00-00:30 America/Goose_Bay",
    from: utc(2009, 10, 31, 12),
    to: utc(2009, 11, 1, 12),
    // Sunday 00:00-00:01 ADT; closed while the clock shows Saturday 23:01-23:59 again (AST);
    // Sunday 00:00-00:30 AST. The change falls at 03:01Z, off the quarter hour.
    open: [
      [utc(2009, 11, 1, 3), utc(2009, 11, 1, 3, 1)],
      [utc(2009, 11, 1, 4), utc(2009, 11, 1, 4, 30)],
    ],
  },
};

const expectedOpen = (c: DstCase, t: number) => c.open.some(([a, b]) => a <= t && t < b);

describe("maintenance windows on daylight-saving days", () => {
  it.each(Object.entries(cases))("%s: open exactly in the expected minutes", (_name, c) => {
    const ws = windowsOf(c.window);
    const wrong: string[] = [];
    for (let t = c.from; t < c.to; t += MIN) {
      if (windowOpen(ws, t) !== expectedOpen(c, t))
        wrong.push(`${new Date(t).toISOString()} ${expectedOpen(c, t) ? "closed" : "open"}`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it.each(Object.entries(cases))("%s: every change found at its edge", (_name, c) => {
    const ws = windowsOf(c.window);
    const edges = c.open.flat();
    for (let t = c.from; t < c.to; t += 5 * MIN) {
      const next = edges.find((e) => e > t);
      if (next !== undefined) expect(nextWindowChange(ws, t), new Date(t).toISOString()).toBe(next);
    }
  });

  it.each(Object.entries(cases))("%s: closed time is the time outside the spans", (_name, c) => {
    const ws = windowsOf(c.window);
    const openMs = c.open.reduce((sum, [a, b]) => sum + (b - a), 0);
    expect(closedMsBetween(ws, c.from, c.to)).toBe(c.to - c.from - openMs);
  });

  it("a batch's minimum counts no closed time after a closing edge in the gap", () => {
    // A one-hour minimum, started when the window opens on the spring-forward day: 30 minutes
    // that day (01:30 EST until the gap), the other 30 the next day (from 01:30 EDT).
    const ws = windowsOf("daily 01:30-02:30 America/New_York");
    const batch: BatchRecord = {
      index: 0,
      percent: 100,
      minDurationMs: HOUR,
      nodeCount: 1,
      state: "running",
      startedAt: utc(2026, 3, 8, 6, 30),
      pausedMs: 0,
      settledAt: undefined,
      endedAt: undefined,
      acceptedFailures: 0,
    };
    expect(countedMs(batch, undefined, utc(2026, 3, 8, 7, 30), ws)).toBe(30 * MIN);
    expect(countedMs(batch, undefined, utc(2026, 3, 9, 5, 30), ws)).toBe(30 * MIN);
    expect(countedMs(batch, undefined, utc(2026, 3, 9, 6), ws)).toBe(HOUR);
  });
});
