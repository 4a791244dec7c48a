/**
 * The DST-day scenarios: each listed change of 2026 is where the zone's wall clock (read through
 * `Intl`) skips or repeats the hour it names, and the windows drawn around it put one edge
 * inside that hour and keep every window within a day.
 */
import { describe, expect, it } from "vitest";
import { createPrng } from "../../agent-sim/prng.js";
import { DST_CHANGES, dstWindows, firstReachesLo } from "../../simulation/dst-days.js";
import { wallClock } from "../../simulation/reference/windows.js";

const MIN = 60_000;

describe("DST_CHANGES", () => {
  for (const c of DST_CHANGES) {
    it(`${c.zone} at ${new Date(c.at).toISOString()} ${c.kind === "gap" ? "skips" : "repeats"} ${c.lo}-${c.hi}`, () => {
      const before = wallClock(c.zone, c.at - MIN).minute;
      const after = wallClock(c.zone, c.at).minute;
      if (c.kind === "gap") {
        expect(before).toBe(c.lo - 1);
        expect(after).toBe(c.hi);
      } else {
        expect(before).toBe(c.hi - 1);
        expect(after).toBe(c.lo);
      }
      const reached = wallClock(c.zone, firstReachesLo(c)).minute;
      expect(reached).toBe(c.kind === "gap" ? c.hi : c.lo);
      expect(wallClock(c.zone, firstReachesLo(c) - MIN).minute).toBe(c.lo - 1);
    });
  }
});

describe("dstWindows", () => {
  it("puts one window's closing edge inside the changed hour and keeps every window in a day", () => {
    for (let seed = 1; seed <= 50; seed++) {
      for (const c of DST_CHANGES) {
        const windows = dstWindows(createPrng(seed), c);
        const straddling = windows.filter((w) => w.startMinute < c.lo && w.endMinute > c.lo);
        expect(straddling).toHaveLength(1);
        expect(straddling[0]?.endMinute).toBeLessThan(c.hi);
        for (const w of windows) {
          expect(w.timeZone).toBe(c.zone);
          expect(w.startMinute).toBeLessThan(w.endMinute);
          expect(w.endMinute).toBeLessThan(1440);
        }
      }
    }
  });
});
