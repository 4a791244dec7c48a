/**
 * A FINAL node sent its campaign's rollback (failed reconnect_timeout, timed_out: it may run the
 * target; its state kept) restarts onto its previous release like a node rolling back: it holds
 * a slot of its pool's disruption budget until its rollback's outcome is recorded, so another
 * campaign offers nothing in that pool over the budget (known defect 32, PD1, seed 514232).
 */
import { describe, expect, it } from "vitest";
import type { PoolLoad } from "../../../control/campaign/index.js";
import { inFlight, waitsFor } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  fleet,
  goOffline,
  goReconnecting,
  inState,
  MIN,
  nodeOf,
  OLD,
  reboot,
  report,
  sent,
  start,
  tick,
} from "./harness.js";

/** Every node in pool "p" of 100 nodes at a 5 % budget: 5 slots for the pool. */
const POOL = 100;
const RECONNECT = 10 * MIN;

function load(inFlightElsewhere: number): ReadonlyMap<string, PoolLoad> {
  return new Map([["p", { size: POOL, inFlightElsewhere }]]);
}

function flying(h: Harness): number {
  return h.nodes.filter((n) => inFlight(n, h.now)).length;
}

/**
 * Campaign A over 6 nodes of pool "p": the first 5 offered; each announces its restart (or goes
 * offline without a word, `how: "timed_out"`) and never comes back, so at the reconnect deadline
 * each is judged final (failed reconnect_timeout, or timed_out), the batch breaches, and each
 * is sent the rollback, its state kept. No node of A is in a slot-holding state any more.
 */
function breachedByFinalNodes(how: "reconnect_timeout" | "timed_out"): {
  a: Harness;
  lost: string[];
} {
  const a = start(fleet(6, { pool: () => "p" }), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    disruptionBudgetPercent: 5,
    failureThresholdPercent: 5,
    reconnectTimeoutMs: RECONNECT,
  });
  tick(a, [], { pools: load(0) });
  const lost = inState(a, "offered");
  expect(lost).toHaveLength(5);
  for (const id of lost) {
    if (how === "reconnect_timeout") {
      report(a, id, "RESTARTING");
      goReconnecting(a, id);
    } else goOffline(a, id);
  }
  tick(a, [], { pools: load(0) });
  a.now = RECONNECT + 1;
  tick(a, [], { pools: load(0) });
  expect(a.campaign.phase).toBe("rolling_back");
  for (const id of lost) {
    const n = nodeOf(a, id);
    expect(n.state).toBe(how === "reconnect_timeout" ? "failed" : "timed_out");
    expect(n.rollbackOperationId).toBeDefined();
    expect(n.rollbackResult).toBeUndefined();
  }
  expect(sent(a, "rollback")).toHaveLength(5);
  return { a, lost };
}

/** Campaign B over 5 nodes of the same pool, same budget. */
function campaignB(): Harness {
  return start(fleet(5, { pool: () => "p" }), {
    batches: [{ percent: 100, minDurationMs: 0 }],
    disruptionBudgetPercent: 5,
  });
}

describe("a final node sent its campaign's rollback holds a pool slot while it may be restarting", () => {
  it.each(["reconnect_timeout", "timed_out"] as const)(
    "counts A's %s nodes with a rollback pending as in flight",
    (how) => {
      const { a, lost } = breachedByFinalNodes(how);
      for (const id of lost) expect(inFlight(nodeOf(a, id), a.now)).toBe(true);
      expect(flying(a)).toBe(5);
    },
  );

  it.each(["reconnect_timeout", "timed_out"] as const)(
    "campaign B offers nothing in a pool whose budget A's %s nodes hold while their rollback is pending",
    (how) => {
      const { a } = breachedByFinalNodes(how);
      const b = campaignB();
      b.now = a.now;
      const pools = load(flying(a));
      const d = tick(b, [], { pools });
      expect(d.actions).toEqual([]);
      expect(inState(b, "waiting")).toHaveLength(5);
      expect(
        waitsFor({ campaign: b.campaign, nodes: b.nodes, now: b.now, pools }).filter(
          (w) => w.kind === "pool_budget",
        ),
      ).toEqual([{ kind: "pool_budget", pool: "p", inFlight: 5, limit: 5 }]);
    },
  );

  it("frees the slot once the rollback's outcome is recorded on the node", () => {
    const { a, lost } = breachedByFinalNodes("reconnect_timeout");
    for (const id of lost) reboot(a, id, OLD);
    a.now += MIN;
    tick(a, [], { pools: load(0) });
    expect(a.campaign.phase).toBe("rolled_back");
    for (const id of lost) expect(nodeOf(a, id).rollbackResult).toBe("rolled_back");
    expect(flying(a)).toBe(0);
    const b = campaignB();
    b.now = a.now;
    tick(b, [], { pools: load(flying(a)) });
    expect(sent(b, "upgrade")).toHaveLength(5);
  });

  it("holds the slot past its recorded rollback deadline until the outcome is recorded: a Control that took over judges it a reconnect timeout after it became ready", () => {
    const { a, lost } = breachedByFinalNodes("reconnect_timeout");
    const deadline = nodeOf(a, lost[0] as string).rollbackDeadline as number;
    expect(deadline).toBe(a.now + RECONNECT);
    // A new leader became ready just before the deadline: nothing is judged yet at it.
    const readyAt = deadline - MIN;
    a.now = deadline + 1;
    tick(a, [], { pools: load(0), readyAt });
    expect(a.campaign.phase).toBe("rolling_back");
    for (const id of lost) expect(inFlight(nodeOf(a, id), a.now)).toBe(true);
    a.now = readyAt + RECONNECT;
    tick(a, [], { pools: load(0), readyAt });
    expect(a.campaign).toMatchObject({ phase: "failed", code: "rollback_unconfirmed" });
    for (const id of lost) {
      expect(nodeOf(a, id).rollbackResult).toBe("rollback_unconfirmed");
      expect(inFlight(nodeOf(a, id), a.now)).toBe(false);
    }
  });

  it("does not count a final node its campaign never sent a rollback, nor one whose rollback was withheld", () => {
    const { a, lost } = breachedByFinalNodes("reconnect_timeout");
    const n = nodeOf(a, lost[0] as string);
    expect(inFlight({ ...n, rollbackOperationId: undefined }, a.now)).toBe(false);
    expect(
      inFlight(
        { ...n, rollbackOperationId: undefined, rollbackResult: "rollback_withheld" },
        a.now,
      ),
    ).toBe(false);
    // A node that was rolling back says its outcome by its state: final, no slot.
    expect(inFlight({ ...n, state: "rolled_back" }, a.now)).toBe(false);
    expect(inFlight({ ...n, state: "rollback_failed" }, a.now)).toBe(false);
  });
});
