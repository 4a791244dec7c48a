import { describe, expect, it } from "vitest";
import { assignBehaviours, backoffDelay, DEFAULT_BACKOFF } from "../../../agent-sim/index.js";

const RATES = {
  refuse: 0.1,
  fail: 0.05,
  noReturn: 0.02,
  revert: 0.03,
  configFail: 0.04,
  noUpgradeCap: 0.06,
  healthFail: 0.07,
  offline: 0.2,
  flap: 0.1,
  silent: 0.05,
  defer: 0.15,
};

describe("behaviour assignment", () => {
  it("gives the same agents the same behaviours for the same seed", () => {
    expect(assignBehaviours(500, RATES, 42)).toEqual(assignBehaviours(500, RATES, 42));
  });

  it("gives different agents for another seed", () => {
    expect(assignBehaviours(500, RATES, 42)).not.toEqual(assignBehaviours(500, RATES, 43));
  });

  it("selects exactly round(rate × count) agents per behaviour, reactions exclusive", () => {
    const behaviours = assignBehaviours(1000, RATES, 1);
    const count = (p: (b: (typeof behaviours)[number]) => boolean) => behaviours.filter(p).length;
    expect(count((b) => b.upgrade === "refuse")).toBe(100);
    expect(count((b) => b.upgrade === "fail")).toBe(50);
    expect(count((b) => b.upgrade === "no-return")).toBe(20);
    expect(count((b) => b.upgrade === "revert")).toBe(30);
    expect(count((b) => b.upgrade === "config-fail")).toBe(40);
    expect(count((b) => b.upgrade === "no-upgrade-cap")).toBe(60);
    expect(count((b) => b.upgrade === "health-fail")).toBe(70);
    expect(count((b) => b.upgrade === "succeed")).toBe(630);
    expect(count((b) => b.offline)).toBe(200);
    expect(count((b) => b.flap)).toBe(100);
    expect(count((b) => b.silent)).toBe(50);
    expect(count((b) => b.defer)).toBe(150);
  });

  it("adds health-fail and defer agents without changing whom the other rates pick", () => {
    const { healthFail: _h, defer: _d, ...older } = RATES;
    const before = assignBehaviours(1000, older, 5);
    const after = assignBehaviours(1000, RATES, 5);
    after.forEach((b, i) => {
      const was = before[i]!;
      expect(b.upgrade === "health-fail" ? "succeed" : b.upgrade).toBe(was.upgrade);
      expect([b.offline, b.flap, b.silent]).toEqual([was.offline, was.flap, was.silent]);
    });
    expect(before.every((b) => !b.defer)).toBe(true);
  });

  it("spreads behaviours over the fleet rather than the first agents", () => {
    const behaviours = assignBehaviours(1000, { refuse: 0.1 }, 9);
    const firstHundred = behaviours.slice(0, 100).filter((b) => b.upgrade === "refuse").length;
    expect(firstHundred).toBeLessThan(30);
  });
});

describe("reconnect backoff", () => {
  it("grows exponentially up to the cap, with full jitter below it", () => {
    const top = (attempt: number) => backoffDelay(attempt, DEFAULT_BACKOFF, () => 0.999999);
    expect(top(0)).toBe(249);
    expect(top(1)).toBe(499);
    expect(top(4)).toBe(3999);
    expect(top(7)).toBe(29_999);
    expect(top(50)).toBe(29_999);
    expect(backoffDelay(50, DEFAULT_BACKOFF, () => 0)).toBe(0);
  });
});
