/**
 * Deferral under a download budget: which scenarios get it, and what it makes of the campaign
 * and its agents.
 */
import { describe, expect, it } from "vitest";
import { worldOf } from "../../simulation/generator.js";

describe("withDeferralBudget", () => {
  it("gives a share of the seeds one campaign of one download at a time, half its agents busy at first", () => {
    let count = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const s = worldOf(seed, { faults: false }).scenario;
      const c = s.campaigns.find(
        (x) => x.spec.maxDownloads === 1 && x.spec.maxDeferMs === 30 * 60_000,
      );
      if (c === undefined) continue;
      count++;
      expect(s.calm).toBe(false);
      expect(c.spec).toMatchObject({ concurrency: 0, batches: [{ percent: 100 }] });
      const group = c.spec.selector?.labels?.group;
      const disabled = new Set(s.operator.map((o) => (o.kind === "disable" ? o.nodeId : "")));
      const members = s.agents.filter(
        (a) => a.labels.group === group && a.platform === undefined && !disabled.has(a.id),
      );
      // All succeed, but for the faults of generation 2, drawn over every feature after it.
      const later = new Set(["fail_on_target", "vanish_after_upgrade"]);
      expect(members.filter((a) => !later.has(a.behaviour)).map((a) => a.behaviour)).toEqual(
        members.filter((a) => !later.has(a.behaviour)).map(() => "succeed"),
      );
      for (const a of members)
        if (a.busyUntil !== undefined) expect(a.busyUntil).toBe(c.at + 45_000);
    }
    expect(count).toBeGreaterThan(5);
  });
});
