/**
 * The checkers that fold over the run's history (PD1, LA1), on hand-built histories: each must
 * break on the defect it names and hold where the agents did nothing wrong.
 */
import { describe, expect, it } from "vitest";
import { disruptionChecker } from "../../simulation/disruption-invariants.js";
import { History, type HistoryEvent } from "../../simulation/history.js";
import { lostAfterUpgradeChecker } from "../../simulation/lost-invariants.js";
import type { SimWorld } from "../../simulation/sim-world.js";

const spec = { disruptionBudgetPercent: 25, reconnectTimeoutMs: 300_000, targetVersion: "2.0.0" };

/** A world of four agents in pool "a" (budget 25 %: one at a time), with `nodes` as Control claims. */
function world(
  events: readonly HistoryEvent[],
  nodes: { nodeId: string; state: string }[] = [],
  records: Record<string, unknown> = {},
): SimWorld {
  const history = new History();
  for (const e of events) history.append(e);
  const campaign = (id: string) => ({ campaign: { id, spec }, createdBy: "operator" });
  return {
    history,
    scenario: { agents: ["n0", "n1", "n2", "n3"].map((id) => ({ id, pool: "a" })) },
    store: {
      tables: {
        campaigns: new Map([
          ["c0", campaign("c0")],
          ["c1", campaign("c1")],
        ]),
        nodes: new Map([["c0", nodes]]),
      },
    },
    fleet: { agents: new Map(Object.entries(records).map(([id, record]) => [id, { record }])) },
  } as unknown as SimWorld;
}

const act = (
  at: number,
  nodeId: string,
  campaignId: string,
  action: "upgrade" | "rollback",
): HistoryEvent => ({
  kind: "act",
  at,
  nodeId,
  pool: "a",
  operationId: `${campaignId}/${nodeId}/${action}`,
  campaignId,
  action,
});

describe("PD1: pool disruption counted from what the agents do", () => {
  it("breaks when an agent starts an upgrade while another of its pool rolls back for another campaign", () => {
    const check = disruptionChecker(
      world([act(1000, "n0", "c1", "rollback"), act(2000, "n1", "c0", "upgrade")]),
    );
    expect(check.step?.(2000).join("\n")).toContain("PD1: n1 began c0/n1/upgrade");
  });

  it("holds when the first agent was back before the second began", () => {
    const check = disruptionChecker(
      world([
        act(1000, "n0", "c0", "upgrade"),
        { kind: "idle", at: 1500, nodeId: "n0", operationId: "c0/n0/upgrade" },
        act(2000, "n1", "c0", "upgrade"),
      ]),
    );
    expect(check.step?.(2000)).toEqual([]);
  });

  it("stops counting an agent that never came back once its reconnect timeout has passed", () => {
    const check = disruptionChecker(
      world([act(1000, "n0", "c0", "upgrade"), act(400_000, "n1", "c0", "upgrade")]),
    );
    expect(check.step?.(400_000)).toEqual([]);
  });
});

describe("PD1: a late rollback is held to the pool's budget when it begins", () => {
  /** `world`, with campaign c1 finished at 1500 and n0's rollback of c1 last sent at `sentAt`. */
  function lateWorld(events: readonly HistoryEvent[], sentAt: number): SimWorld {
    const w = world(events, [], {
      n0: { sent: [{ id: "c1/n0/rollback", campaignId: "c1", kind: "rollback", at: sentAt }] },
    });
    const c1 = w.store.tables.campaigns.get("c1") as unknown as { campaign: object };
    c1.campaign = { ...c1.campaign, finishedAt: 1500 };
    return w;
  }

  it("breaks when an agent begins a rollback sent after its campaign finished while another of its pool upgrades", () => {
    const check = disruptionChecker(
      lateWorld([act(1000, "n1", "c0", "upgrade"), act(2000, "n0", "c1", "rollback")], 1900),
    );
    expect(check.step?.(2000).join("\n")).toContain("PD1: n0 began late rollback c1/n0/rollback");
  });

  it("leaves to its campaign a rollback sent before the campaign finished", () => {
    const check = disruptionChecker(
      lateWorld([act(1000, "n1", "c0", "upgrade"), act(2000, "n0", "c1", "rollback")], 1200),
    );
    expect(check.step?.(2000)).toEqual([]);
  });
});

describe("LA1: an agent lost after its upgrade is never succeeded", () => {
  const record = {
    received: [{ id: "c0/n0/upgrade", at: 1000 }],
    connects: [{ at: 3000, version: "2.0.0" }],
  };

  it("breaks when the node is first claimed succeeded after its machine went away", () => {
    const check = lostAfterUpgradeChecker(
      world([{ kind: "gone", at: 5000, nodeId: "n0" }], [{ nodeId: "n0", state: "succeeded" }], {
        n0: record,
      }),
    );
    expect(check.step?.(6000).join("\n")).toContain("LA1: n0 of c0 is succeeded");
  });

  it("holds when the node was succeeded before its machine went away", () => {
    const nodes = [{ nodeId: "n0", state: "succeeded" }];
    const w = world([], nodes, { n0: record });
    const check = lostAfterUpgradeChecker(w);
    expect(check.step?.(4000)).toEqual([]);
    w.history.append({ kind: "gone", at: 5000, nodeId: "n0" });
    expect(check.step?.(6000)).toEqual([]);
  });
});
