import { describe, expect, it } from "vitest";
import { closest, editDistance } from "../../../cli/suggest.js";

const GROUPS = ["node", "token", "release", "campaign", "audit", "version", "completion"];

describe("did you mean", () => {
  it.each([
    ["campaign", "campaign", 0],
    ["campaing", "campaign", 1],
    ["nodes", "node", 1],
    ["relase", "release", 1],
    ["kitten", "sitting", 3],
    ["", "abc", 3],
  ])("the edit distance of %j and %j is %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it.each([
    ["campaing", "campaign"],
    ["Campain", "campaign"],
    ["nodes", "node"],
    ["tokn", "token"],
    ["camp", "campaign"],
    ["vesion", "version"],
    ["ver", "version"],
    ["frobnicate", undefined],
    ["xy", undefined],
    ["", undefined],
    ["auditing", undefined],
  ])("suggests for %j: %j", (typed, expected) => {
    expect(closest(typed, GROUPS)).toBe(expected);
  });
});
