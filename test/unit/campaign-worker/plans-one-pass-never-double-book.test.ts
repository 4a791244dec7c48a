/**
 * Each node belongs to at most one active campaign (SPEC §4), also when two running plans
 * whose groups take the same nodes start a group in the same fleet pass: the pass reads the
 * fleet once, and each start is admitted over the fleet as the starts before it left it
 * (`withBusy`, system-start.ts), so the second plan's group waits ("busy in another
 * campaign"). Found by the engine review (R06): both groups started and both offered n1.
 */
import { describe, expect, it } from "vitest";
import { createPlan, resolveSpec } from "../../../control/campaign/index.js";
import { INTERVAL, T0, world } from "./fleet-world.js";

describe("two plans started in one fleet pass", () => {
  it("never puts a node in two active campaigns", async () => {
    const ids = ["n1", "n2", "n3", "n4"];
    const w = world(ids);
    for (const id of ids) w.gateway.connect(id);
    const template = resolveSpec({
      targetVersion: "2.0.0",
      disruptionBudgetPercent: 100,
      batches: [
        { percent: 5, minDurationMs: 30 * 60_000 },
        { percent: 100, minDurationMs: 30 * 60_000 },
      ],
    });
    const group = { name: "all", selector: { labels: {}, pools: ["p"], nodeIds: [] } };
    await w.fleetStore.transaction(async (tx) => {
      for (const id of ["plan-a", "plan-b"]) {
        await tx.insertPlan(
          createPlan({ id, template, groups: [group], waitMs: 0, now: T0, createdBy: "alice" }),
          new Date(T0),
        );
      }
    });
    await w.runFor(INTERVAL + 5_000);
    const active = [...w.store.tables.campaigns.values()].filter(
      (c) => c.campaign.finishedAt === undefined,
    );
    const holders = new Map<string, string[]>();
    for (const c of active) {
      for (const n of w.store.tables.nodes.get(c.campaign.id) ?? []) {
        holders.set(n.nodeId, [...(holders.get(n.nodeId) ?? []), c.campaign.id]);
      }
    }
    const doubled = [...holders].filter(([, cs]) => cs.length > 1);
    const upgradesByNode = new Map<string, Set<string>>();
    for (const s of w.gateway.sent) {
      if (!s.id.endsWith("/upgrade")) continue;
      const set = upgradesByNode.get(s.nodeId) ?? new Set<string>();
      set.add(s.id);
      upgradesByNode.set(s.nodeId, set);
    }
    const offeredTwice = [...upgradesByNode]
      .filter(([, s]) => s.size > 1)
      .map(([n, s]) => `${n}: ${[...s].join(", ")}`);
    w.unlisten();
    expect(doubled).toEqual([]);
    expect(offeredTwice).toEqual([]);
    expect(active).toHaveLength(1);
    const waiting = [...w.fleetStore.tables.plans.values()].filter((p) =>
      p.plan.message?.includes("busy in another campaign"),
    );
    expect(waiting).toHaveLength(1);
  });
});
