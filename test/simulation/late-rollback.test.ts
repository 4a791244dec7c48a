/**
 * The rollback decided across a takeover while a final node is away: which scenarios get it,
 * and what it makes of the campaign and its agents.
 */
import { describe, expect, it } from "vitest";
import { worldOf } from "../../simulation/generator.js";

describe("withLateRollback", () => {
  it("gives a share of the seeds with faults one campaign that pauses on a late node", () => {
    let count = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const s = worldOf(seed, { faults: true }).scenario;
      const plan = s.lateRollback;
      if (plan === undefined) continue;
      count++;
      expect(s.calm).toBe(false);
      const c = s.campaigns.find((x) => x.id === plan.campaignId);
      expect(c?.spec).toMatchObject({ failureThresholdPercent: 0, onBreach: "pause" });
      const group = c?.spec.selector?.labels?.group;
      const late = s.agents.find((a) => a.id === plan.nodeId);
      expect(late).toMatchObject({ behaviour: "late_return", labels: { group } });
    }
    expect(count).toBeGreaterThan(5);
  });

  it("never appears without faults", () => {
    for (let seed = 1; seed <= 200; seed++) {
      expect(worldOf(seed, { faults: false }).scenario.lateRollback).toBeUndefined();
    }
  });
});
