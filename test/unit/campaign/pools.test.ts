import { describe, expect, it } from "vitest";
import type { PoolLoad } from "../../../control/campaign/index.js";
import { inFlight, waitsFor } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { bringBack, fleet, inState, MIN, report, sent, start, tick } from "./harness.js";

const one = [{ percent: 100, minDurationMs: 0 }];

/** A campaign of `count` nodes, all in pool "p", with a 5 % budget. */
function campaign(count: number): Harness {
  return start(fleet(count, { pool: () => "p" }), {
    batches: one,
    disruptionBudgetPercent: 5,
  });
}

function load(size: number, inFlightElsewhere: number): ReadonlyMap<string, PoolLoad> {
  return new Map([["p", { size, inFlightElsewhere }]]);
}

function flying(h: Harness): number {
  return h.nodes.filter((n) => inFlight(n, h.now)).length;
}

describe("the pool disruption budget counts every campaign (PoolLoad)", () => {
  it("offers nothing in a pool whose budget other campaigns already hold", () => {
    const first = campaign(10);
    tick(first, [], { pools: load(100, 0) });
    expect(sent(first, "upgrade")).toHaveLength(5);
    const second = campaign(4);
    const d = tick(second, [], { pools: load(100, flying(first)) });
    expect(d.actions).toEqual([]);
    // Waiting for the pool is not being offline: nothing is skipped.
    expect(inState(second, "waiting")).toHaveLength(4);
  });

  it("offers only what is left of the pool's budget", () => {
    const h = campaign(4);
    tick(h, [], { pools: load(100, 3) });
    expect(sent(h, "upgrade")).toHaveLength(2);
  });

  it("keeps 20 campaigns of 4 nodes in one 100-node pool within 5 in flight together", () => {
    const campaigns = Array.from({ length: 20 }, () => campaign(4));
    for (const [i, h] of campaigns.entries()) {
      const elsewhere = campaigns.reduce((sum, o, j) => (j === i ? sum : sum + flying(o)), 0);
      tick(h, [], { pools: load(100, elsewhere) });
    }
    expect(campaigns.reduce((sum, h) => sum + flying(h), 0)).toBe(5);
  });

  it("the 'at least 1' is the pool's total: a small pool with one in flight elsewhere waits", () => {
    const h = campaign(4);
    tick(h, [], { pools: load(10, 1) });
    expect(sent(h, "upgrade")).toEqual([]);
  });

  it("sizes the pool by the campaign's own nodes when no PoolLoad is given (as before)", () => {
    const h = start(fleet(40, { pool: () => "p" }), { batches: one, disruptionBudgetPercent: 5 });
    tick(h);
    expect(sent(h, "upgrade")).toHaveLength(2);
  });

  it("sizes the pool by the fleet's pool size when given, even above the campaign's nodes", () => {
    const h = campaign(40);
    tick(h, [], { pools: load(200, 0) });
    expect(sent(h, "upgrade")).toHaveLength(10);
  });
});

describe("a node rolling back disrupts its pool (it restarts onto its previous release)", () => {
  /**
   * Campaign A over 7 nodes of a 100-node pool (budget 5): the first 5 offered, back on the
   * target and verifying past their config grace (no slot held), then the last 2 offered and
   * one of them fails: the breach sends the 6 nodes that upgraded or were upgrading a rollback
   * at once.
   */
  function breachedWithRollbacks(): Harness {
    const a = start(fleet(7, { pool: () => "p" }), {
      batches: [{ percent: 100, minDurationMs: 60 * MIN }],
      disruptionBudgetPercent: 5,
      configGraceMs: MIN,
      failureThresholdPercent: 5,
    });
    for (let round = 0; round < 2; round++) {
      tick(a, [], { pools: load(100, 0) });
      const offered = inState(a, "offered");
      if (round === 1) {
        report(a, offered[0] as string, "FAILED");
        tick(a, [], { pools: load(100, 0) });
        break;
      }
      bringBack(a, offered);
      tick(a, [], { pools: load(100, 0) });
      a.now += MIN + 1;
    }
    return a;
  }

  it("counts as in flight, like the upgrade it undoes", () => {
    const a = breachedWithRollbacks();
    const rolling = a.nodes.filter((n) => n.state === "rolling_back");
    expect(rolling).toHaveLength(6);
    for (const n of rolling) expect(inFlight(n, a.now)).toBe(true);
  });

  it("offers nothing in a 100-node pool (budget 5) where another campaign has 6 nodes rolling back", () => {
    const a = breachedWithRollbacks();
    expect(a.campaign.phase).toBe("rolling_back");
    expect(inState(a, "rolling_back")).toHaveLength(6);
    const b = campaign(5);
    const d = tick(b, [], { pools: load(100, flying(a)) });
    expect(d.actions).toEqual([]);
    expect(inState(b, "waiting")).toHaveLength(5);
  });

  it("says the pool's budget is what it waits for, counting the nodes rolling back", () => {
    const a = breachedWithRollbacks();
    const rolling = inState(a, "rolling_back").length;
    const b = campaign(5);
    const pools = load(100, flying(a));
    tick(b, [], { pools });
    expect(
      waitsFor({ campaign: b.campaign, nodes: b.nodes, now: b.now, pools }).filter(
        (w) => w.kind === "pool_budget",
      ),
    ).toEqual([{ kind: "pool_budget", pool: "p", inFlight: rolling, limit: 5 }]);
  });
});
