/**
 * The disable of the nodes next in line: which nodes the operator picks, and which scenarios
 * get it.
 */
import { describe, expect, it } from "vitest";
import type { CampaignNode } from "../../control/campaign/index.js";
import { nextInLine, withDisableNext } from "../../simulation/disable-next.js";
import { worldOf } from "../../simulation/generator.js";

const node = (nodeId: string, batch: number, order: number, state = "waiting") =>
  ({ nodeId, batch, order, pool: "", state, stateChangedAt: 0 }) as CampaignNode;

describe("nextInLine", () => {
  const nodes = [
    node("d", 0, 3),
    node("a", 0, 0, "applying"),
    node("c", 0, 2),
    node("b", 0, 1),
    node("e", 1, 4),
  ];

  it("takes the batch's waiting nodes in canary order", () => {
    expect(nextInLine(nodes, 0, 2, () => true)).toEqual(["b", "c"]);
    expect(nextInLine(nodes, 0, 5, () => true)).toEqual(["b", "c", "d"]);
    expect(nextInLine(nodes, 1, 2, () => true)).toEqual(["e"]);
  });

  it("passes over the nodes that are not online, as the offering does", () => {
    expect(nextInLine(nodes, 0, 2, (id) => id !== "b")).toEqual(["c", "d"]);
  });
});

describe("withDisableNext", () => {
  it("gives a share of the seeds one such disable, on a campaign it leaves one slot", () => {
    let with_ = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const s = worldOf(seed, { faults: false }).scenario;
      const actions = s.operator.filter((o) => o.kind === "disable_next");
      expect(actions.length).toBeLessThanOrEqual(1);
      const action = actions[0];
      if (action === undefined) continue;
      with_++;
      expect(s.calm).toBe(false);
      const c = s.campaigns.find((x) => x.id === action.campaignId);
      expect(c?.spec.concurrency).toBe(1);
      expect(action.at).toBeGreaterThan(c?.at ?? Number.POSITIVE_INFINITY);
      expect([2, 3]).toContain(action.count);
    }
    expect(with_).toBeGreaterThan(10);
  });

  it("leaves a calm scenario alone: the same scenario, not calm, gets the disable", () => {
    let calm = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const s = worldOf(seed, { faults: false }).scenario;
      if (s.calm) {
        calm++;
        expect(s.operator.some((o) => o.kind === "disable_next")).toBe(false);
        continue;
      }
      if (!s.operator.some((o) => o.kind === "disable_next")) continue;
      // This seed's draw gives the disable: made calm (and without it), it gets none.
      const without: typeof s = {
        ...s,
        operator: s.operator.filter((o) => o.kind !== "disable_next"),
      };
      const asCalm = { ...without, calm: true };
      expect(withDisableNext(asCalm)).toBe(asCalm);
      expect(withDisableNext(without).operator.some((o) => o.kind === "disable_next")).toBe(true);
    }
    expect(calm).toBeGreaterThan(5);
  });
});
