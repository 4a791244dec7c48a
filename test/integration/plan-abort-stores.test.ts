/**
 * The plan abort (control/admin/plan-commands.ts) on both fleet store adapters, PostgreSQL (the
 * admin API's) and memory (the simulated operator's): the plan's end, its audit row and its
 * running campaign's abort command commit together.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { abortRolloutPlan } from "../../control/admin/plan-commands.js";
import { createPlan } from "../../control/campaign/index.js";
import {
  at,
  campaignOf,
  type Fixture,
  memoryAdapter,
  SPEC,
  sqlAdapter,
  T0,
} from "./fleet-store-fixtures.js";

describe.each([sqlAdapter(), memoryAdapter()])("a plan abort on the $name store", (adapter) => {
  let fx: Fixture;
  beforeAll(() => adapter.open(), 60_000);
  afterAll(() => adapter.close());
  beforeEach(async () => {
    fx = await adapter.fresh();
  });

  const setUp = async (): Promise<void> => {
    await fx.putNode({ id: "a" });
    const c = campaignOf("p1-g1", { a: "offered" }, T0);
    await fx.campaigns.transaction((tx) =>
      tx.insertCampaign({ ...c, createdBy: "plan:p1", createdByIp: "", now: at(0) }),
    );
    const base = createPlan({
      id: "p1",
      template: SPEC,
      groups: ["p", "q"].map((pool) => ({
        name: pool,
        selector: { labels: {}, pools: [pool], nodeIds: [] },
      })),
      waitMs: 0,
      now: T0,
      createdBy: "alice",
    });
    const plan = {
      ...base,
      groups: base.groups.map((g, i) =>
        i === 0 ? { ...g, campaignId: "p1-g1", startedAt: T0 } : g,
      ),
    };
    await fx.fleet.transaction((tx) => tx.insertPlan(plan, at(0)));
  };

  it("ends the plan and records its running campaign's abort with rollback in one commit", async () => {
    await setUp();
    const done = await abortRolloutPlan(fx.fleet, {
      id: "p1",
      reason: "freeze",
      rollback: true,
      actor: { name: "alice", ip: "10.0.0.9" },
      now: at(5000),
    });
    expect(done.abortedCampaign).toBe("p1-g1");
    const row = await fx.fleet.transaction((tx) => tx.readPlan("p1"));
    expect(row).toMatchObject({
      version: 2,
      plan: { phase: "aborted", message: "aborted: freeze" },
    });
    const pending = await fx.campaigns.transaction((tx) => tx.pendingCommands("p1-g1"));
    expect(pending.map(({ id: _id, ...rest }) => rest)).toEqual([
      {
        kind: "abort",
        rollback: true,
        reason: "plan p1 aborted: freeze",
        actor: "alice",
        actor_ip: "10.0.0.9",
        gate: null,
      },
    ]);
  });
});
