import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { formatTime } from "../../../ui/format.js";

describe("the dashboard's times", () => {
  it("name their zone, so 'opens 03:00' is never read in the wrong one", () => {
    const at = new Date(Date.UTC(2026, 11, 7, 3, 0, 0));
    const minutes = -at.getTimezoneOffset();
    const sign = minutes < 0 ? "-" : "+";
    const abs = Math.abs(minutes);
    const zone =
      minutes === 0
        ? "UTC"
        : `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
    expect(formatTime(timestampFromDate(at))).toMatch(
      new RegExp(`^2026-12-0[67] \\d\\d:00:00 ${zone.replace("+", "\\+")}$`),
    );
  });

  it("says - for no time", () => {
    expect(formatTime(undefined)).toBe("-");
  });
});
