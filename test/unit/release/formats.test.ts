import { describe, expect, it } from "vitest";
import {
  compareSemver,
  formatRfc3339,
  parseRfc3339,
} from "../../../control/shared/release/index.js";

describe("parseRfc3339", () => {
  it.each([
    ["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.000Z"],
    ["2030-01-01T02:30:00+02:30", "2030-01-01T00:00:00.000Z"],
    ["2029-12-31T19:00:00-05:00", "2030-01-01T00:00:00.000Z"],
    ["2030-01-01T00:00:00.1Z", "2030-01-01T00:00:00.100Z"],
    ["2030-01-01T00:00:00.123456789Z", "2030-01-01T00:00:00.123Z"],
    ["2028-02-29T00:00:00Z", "2028-02-29T00:00:00.000Z"],
    ["2000-02-29T00:00:00Z", "2000-02-29T00:00:00.000Z"],
    ["0099-06-01T00:00:00Z", "0099-06-01T00:00:00.000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseRfc3339(text)?.toISOString()).toBe(iso);
  });

  it.each([
    "2100-02-29T00:00:00Z",
    "2030-13-01T00:00:00Z",
    "2030-04-31T00:00:00Z",
    "2030-01-01T24:00:00Z",
    "2030-01-01T00:60:00Z",
    "2030-01-01T23:59:60Z",
    "2030-01-01t00:00:00z",
    "2030-01-01T00:00:00+2:00",
    "2030-01-01T00:00:00+24:00",
    "2030-01-01T00:00:00.Z",
    " 2030-01-01T00:00:00Z",
  ])("refuses %s", (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it("round-trips through formatRfc3339", () => {
    for (const iso of [
      "2030-01-01T00:00:00Z",
      "2030-01-01T00:00:00.001Z",
      "1970-01-01T00:00:00Z",
    ]) {
      expect(formatRfc3339(parseRfc3339(iso)!)).toBe(iso);
    }
  });
});

describe("compareSemver", () => {
  it("orders versions by SemVer 2.0.0 precedence", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.2.0",
      "1.10.0",
      "2.0.0",
    ];
    for (let i = 0; i < ordered.length; i += 1) {
      for (let j = 0; j < ordered.length; j += 1) {
        expect(
          Math.sign(compareSemver(ordered[i]!, ordered[j]!)),
          `${ordered[i]} vs ${ordered[j]}`,
        ).toBe(Math.sign(i - j));
      }
    }
  });

  it("ignores build metadata", () => {
    expect(compareSemver("1.0.0+a", "1.0.0+b")).toBe(0);
  });

  it("throws a RangeError for a version that is not SemVer", () => {
    expect(() => compareSemver("1.0", "1.0.0")).toThrow(RangeError);
  });
});
