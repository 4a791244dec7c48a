import { describe, expect, it } from "vitest";
import { decideRange, type RangeDecision } from "../../../control/releases/byte-range.js";

const ETAG = '"abc"';
const full: RangeDecision = { kind: "full" };
const none: RangeDecision = { kind: "unsatisfiable" };
const part = (start: number, end: number): RangeDecision => ({ kind: "partial", start, end });

describe("decideRange over a 100-byte file", () => {
  it.each<[string | undefined, RangeDecision]>([
    [undefined, full],
    ["bytes=0-9", part(0, 9)],
    ["bytes=10-10", part(10, 10)],
    ["bytes=90-", part(90, 99)],
    ["bytes=90-1000", part(90, 99)],
    ["bytes=-10", part(90, 99)],
    ["bytes=-1000", part(0, 99)],
    ["bytes=99-99", part(99, 99)],
    [" Bytes = 5-6 ", part(5, 6)],
    ["bytes=100-", none],
    ["bytes=100-200", none],
    ["bytes=-0", none],
    ["bytes=99999999999999999999-", none],
    ["bytes=0-99999999999999999999", part(0, 99)],
    ["bytes=9-5", full],
    ["bytes=0-1,5-6", full],
    ["bytes=-", full],
    ["bytes=a-b", full],
    ["items=0-9", full],
    ["bytes 0-9", full],
    ["", full],
  ])("answers %j with %j", (range, decision) => {
    expect(decideRange(range, 100, ETAG)).toEqual(decision);
  });

  it("serves the range when If-Range is the file's entity tag", () => {
    expect(decideRange("bytes=0-9", 100, ETAG, ETAG)).toEqual(part(0, 9));
  });

  it("sends the whole file when If-Range names another tag or a date", () => {
    expect(decideRange("bytes=0-9", 100, ETAG, '"other"')).toEqual(full);
    expect(decideRange("bytes=0-9", 100, ETAG, "Wed, 21 Oct 2015 07:28:00 GMT")).toEqual(full);
  });

  it("finds nothing satisfiable in an empty file", () => {
    expect(decideRange("bytes=0-", 0, ETAG)).toEqual(none);
    expect(decideRange("bytes=-5", 0, ETAG)).toEqual(none);
  });
});
