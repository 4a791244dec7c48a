import { describe, expect, it } from "vitest";
import type { PoolLoad } from "../../../control/campaign/index.js";
import { inFlight } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import { fleet, inState, sent, start, tick } from "./harness.js";

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
