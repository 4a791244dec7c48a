/**
 * The text of maintenance windows: every form of days and times `parseWindow` accepts, what it
 * refuses and why, and the canonical text `formatWindow` writes (which parses back to the same
 * window).
 */
import { describe, expect, it } from "vitest";
import {
  closedMsBetween,
  formatWindow,
  isTimeZone,
  type MaintenanceWindow,
  nextWindowChange,
  parseWindow,
  windowOpen,
} from "../../../control/campaign/index.js";

const ALL = [0, 1, 2, 3, 4, 5, 6];
const EXPECTED =
  '; expected [DAYS] HH:MM-HH:MM [TIME_ZONE], e.g. "Mon-Fri 02:00-04:00 Europe/Berlin"';
const w = (days: number[], startMinute: number, endMinute: number, timeZone = "UTC") => ({
  days,
  startMinute,
  endMinute,
  timeZone,
});

describe("window text", () => {
  it.each<[string, MaintenanceWindow]>([
    ["02:00-04:00", w(ALL, 120, 240)],
    ["daily 02:00-04:00", w(ALL, 120, 240)],
    ["* 02:00-04:00", w(ALL, 120, 240)],
    ["DAILY 02:00-04:00", w(ALL, 120, 240)],
    ["weekdays 02:00-04:00", w([1, 2, 3, 4, 5], 120, 240)],
    ["Weekends 02:00-04:00", w([0, 6], 120, 240)],
    ["Sat,Sun 02:00-04:00", w([0, 6], 120, 240)],
    ["Monday 02:00-04:00", w([1], 120, 240)],
    ["sunday,SATURDAY 02:00-04:00", w([0, 6], 120, 240)],
    ["Tuesday,wednesday,Thursday,FRIDAY 02:00-04:00", w([2, 3, 4, 5], 120, 240)],
    ["Thu-Tue 02:00-04:00", w([0, 1, 2, 4, 5, 6], 120, 240)],
    ["Tue-Thu 02:00-04:00", w([2, 3, 4], 120, 240)],
    ["Fri-Mon 02:00-04:00", w([0, 1, 5, 6], 120, 240)],
    ["Sat-Sat 02:00-04:00", w([6], 120, 240)],
    ["Wed,Mon,Wed 02:00-04:00", w([1, 3], 120, 240)],
    ["5:07-9:59", w(ALL, 307, 599)],
    ["00:00-24:00", w(ALL, 0, 1440)],
    ["23:59-00:01", w(ALL, 1439, 1)],
    ["22:00-00:00", w(ALL, 1320, 0)],
    ["  Mon 01:00-02:00   Europe/Berlin  ", w([1], 60, 120, "Europe/Berlin")],
    ["01:00-02:00 Etc/UTC", w(ALL, 60, 120, "Etc/UTC")],
  ])("parses %j", (text, window) => {
    expect(parseWindow(text)).toEqual({ ok: true, window });
  });

  it.each([
    ["", "no HH:MM-HH:MM span"],
    ["02:00 04:00", "no HH:MM-HH:MM span"],
    ["Mon Tue 02:00-04:00", "unexpected words"],
    ["02:00-04:00 UTC UTC", "unexpected words"],
    ["Mon-Tue-Wed 02:00-04:00", '"Mon-Tue-Wed" is not a day or a range of days'],
    ["Mon-Funday 02:00-04:00", '"Mon-Funday" is not a day or a range of days'],
    ["Funday-Mon 02:00-04:00", '"Funday-Mon" is not a day or a range of days'],
    ["102:00-04:00", "no HH:MM-HH:MM span"],
    ["02:00-04:000", "no HH:MM-HH:MM span"],
    ["Mon,,Tue 02:00-04:00", '"" is not a day or a range of days'],
    ["24:00-02:00", '"24:00" is not a time from 00:00 to 23:59'],
    ["25:00-02:00", '"25:00" is not a time from 00:00 to 23:59'],
    ["02:60-03:00", '"02:60" is not a time from 00:00 to 23:59'],
    ["02:00-24:01", '"24:01" is not a time from 00:00 to 24:00'],
    ["02:00-25:00", '"25:00" is not a time from 00:00 to 24:00'],
    ["00:00-00:00", "the span has no length (it opens when it closes)"],
    ["13:30-13:30", "the span has no length"],
    ["01:00-02:00 Mars/Olympus", '"Mars/Olympus" is not a time zone'],
  ])("refuses %j, saying why", (text, why) => {
    const p = parseWindow(text);
    expect(p.ok).toBe(false);
    if (!p.ok) {
      expect(p.message.startsWith(`window "${text.trim()}": ${why}`)).toBe(true);
      expect(p.message.endsWith(EXPECTED)).toBe(true);
    }
  });

  it("names the accepted forms when a day is wrong, quoting the text without its margins", () => {
    const p = parseWindow("  Funday 02:00-03:00 ");
    expect(p).toEqual({
      ok: false,
      message:
        'window "Funday 02:00-03:00": "Funday" is not a day or a range of days (Mon, Tue-Fri, Sat,Sun, daily); expected [DAYS] HH:MM-HH:MM [TIME_ZONE], e.g. "Mon-Fri 02:00-04:00 Europe/Berlin"',
    });
  });

  it.each<[MaintenanceWindow, string]>([
    [w(ALL, 120, 240), "daily 02:00-04:00 UTC"],
    [w([1, 2, 3, 4, 5], 65, 1440, "Europe/Berlin"), "Mon-Fri 01:05-24:00 Europe/Berlin"],
    [w([0, 6], 1320, 120), "Sat,Sun 22:00-02:00 UTC"],
    [w([1, 2], 0, 30), "Mon,Tue 00:00-00:30 UTC"],
    [w([1, 3, 5], 600, 660), "Mon,Wed,Fri 10:00-11:00 UTC"],
    [w([0, 2, 3, 4, 6], 9, 59), "Tue-Thu,Sat,Sun 00:09-00:59 UTC"],
    [w([0, 1, 2, 4, 5, 6], 0, 1), "Mon,Tue,Thu-Sun 00:00-00:01 UTC"],
    [w([3], 1439, 1440), "Wed 23:59-24:00 UTC"],
  ])("writes %j as %s, which parses back to it", (window, text) => {
    expect(formatWindow(window)).toBe(text);
    expect(parseWindow(text)).toEqual({ ok: true, window });
  });

  it("knows the runtime's time zones", () => {
    expect(isTimeZone("America/New_York")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("America/Nowhere")).toBe(false);
  });
});

describe("windows that never close", () => {
  it("a window open all day every day is always open, never changes and counts no closed time", () => {
    const ws = [w(ALL, 0, 1440, "Europe/Berlin")];
    const from = Date.UTC(2026, 2, 27);
    const to = Date.UTC(2026, 3, 3);
    expect(windowOpen(ws, from)).toBe(true);
    expect(nextWindowChange(ws, from)).toBeUndefined();
    expect(closedMsBetween(ws, from, to)).toBe(0);
  });
});
