/**
 * The contract of the fleet store port (control/campaign-store/fleet-port.ts) on both
 * adapters: PostgreSQL (the product, a real database) and memory (the simulation). Every test
 * runs on a fresh, empty store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPlan, type NodeState } from "../../control/campaign/index.js";
import { PlanVersionConflict } from "../../control/campaign-store/index.js";
import {
  at,
  campaignOf,
  desired,
  type Fixture,
  memoryAdapter,
  SPEC,
  sqlAdapter,
  T0,
} from "./fleet-store-fixtures.js";

describe.each([sqlAdapter(), memoryAdapter()])("the $name fleet store", (adapter) => {
  let fx: Fixture;
  beforeAll(() => adapter.open(), 60_000);
  afterAll(() => adapter.close());
  beforeEach(async () => {
    fx = await adapter.fresh();
  });

  /** Inserts a campaign, then (when `finish`) writes it ended `phase` at `finishedAt`. */
  const insert = async (
    id: string,
    nodes: Record<string, NodeState>,
    createdAt: number,
    createdBy = "tester",
    finish?: { phase: "completed" | "rolled_back"; at: number },
  ) => {
    const c = campaignOf(id, nodes, createdAt);
    await fx.campaigns.transaction((tx) =>
      tx.insertCampaign({ ...c, createdBy, createdByIp: "", now: new Date(createdAt) }),
    );
    if (finish) {
      await fx.campaigns.transaction((tx) =>
        tx.writeDecision({
          campaignId: id,
          version: 1,
          campaign: { ...c.campaign, phase: finish.phase, finishedAt: finish.at },
          nodes: [],
          operations: [],
          appliedCommands: [],
          audits: [],
          now: new Date(finish.at),
        }),
      );
    }
  };

  it("keeps one canary-order secret: non-empty, the same in every transaction", async () => {
    const first = await fx.fleet.transaction((tx) => tx.readOrderSecret());
    const again = await fx.fleet.transaction((tx) => tx.readOrderSecret());
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(again).toBe(first);
  });

  it("reads the fleet with labels, platforms, liveness, confirmed and running sequences, and who is busy", async () => {
    await fx.putRelease("2.0.0", 2);
    await fx.putNode({
      id: "a",
      labels: { tier: "web" },
      version: "2.0.0",
      platform: "linux-arm64",
      confirmed: 2,
      online: true,
      heldBy: "ctl-1",
    });
    await fx.putNode({ id: "b", everConnected: false, enabled: false });
    await fx.putNode({ id: "c" });
    await insert("c1", { c: "offered" }, T0);
    const rows = await fx.fleet.transaction((tx) => tx.readFleet());
    expect(
      rows.map((r) => [
        r.id,
        r.runningSequence,
        r.busy,
        r.online,
        r.heldBy,
        r.everConnected,
        r.enabled,
      ]),
    ).toEqual([
      ["a", 2, false, true, "ctl-1", true, true],
      ["b", undefined, false, false, null, false, false],
      ["c", undefined, true, false, null, true, true],
    ]);
    expect(rows[0]).toMatchObject({
      labels: { tier: "web" },
      pool: "p",
      confirmedSequence: 2,
      agentVersion: "2.0.0",
      platform: "linux-arm64",
    });
    expect(rows[2]?.platform).toBe("linux-amd64");
    expect(rows.map((r) => r.busyIn)).toEqual([undefined, undefined, "c1"]);
  });

  it("records administrators' commands with unique ids, pending in order, and only on commit", async () => {
    await fx.putNode({ id: "a" });
    await insert("c1", { a: "waiting" }, T0);
    const command = (kind: string, rollback = false) => ({
      campaignId: "c1",
      kind,
      rollback,
      reason: `${kind} please`,
      actor: "alice",
      actorIp: "10.0.0.1",
    });
    const ids = await fx.fleet.transaction(async (tx) => [
      await tx.insertCommand(command("pause"), at(1000)),
      await tx.insertCommand(command("abort", true), at(2000)),
      await tx.insertCommand({ ...command("skip_gate"), gate: 2 }, at(2500)),
    ]);
    expect(new Set(ids).size).toBe(3);
    await expect(
      fx.fleet.transaction(async (tx) => {
        await tx.insertCommand(command("resume"), at(3000));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const pending = await fx.campaigns.transaction((tx) => tx.pendingCommands("c1"));
    expect(pending).toEqual([
      {
        id: ids[0],
        kind: "pause",
        rollback: false,
        gate: null,
        reason: "pause please",
        actor: "alice",
        actor_ip: "10.0.0.1",
      },
      {
        id: ids[1],
        kind: "abort",
        rollback: true,
        gate: null,
        reason: "abort please",
        actor: "alice",
        actor_ip: "10.0.0.1",
      },
      {
        id: ids[2],
        kind: "skip_gate",
        rollback: false,
        gate: 2,
        reason: "skip_gate please",
        actor: "alice",
        actor_ip: "10.0.0.1",
      },
    ]);
  });

  it("writes, replaces, reads oldest first and deletes desired versions, each transaction whole or not at all", async () => {
    const d = desired();
    const other = desired({
      id: "d-other",
      setAt: T0 + 50,
      selector: { labels: {}, pools: ["q"], nodeIds: [] },
    });
    await fx.fleet.transaction(async (tx) => {
      await tx.writeDesired(d);
      await tx.writeDesired(other);
    });
    expect((await fx.fleet.transaction((tx) => tx.readDesired())).map((x) => x.id)).toEqual([
      "d-other",
      d.id,
    ]);
    const halted = { ...d, haltedAt: T0 + 200, haltedReason: "burst" };
    await fx.fleet.transaction((tx) => tx.writeDesired(halted));
    expect((await fx.fleet.transaction((tx) => tx.readDesired()))[1]).toEqual(halted);
    await expect(
      fx.fleet.transaction(async (tx) => {
        await tx.writeDesired({ ...d, target: { version: "9.0.0", sequence: 9 } });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect((await fx.fleet.transaction((tx) => tx.readDesired()))[1]?.target.version).toBe("2.0.0");
    expect(await fx.fleet.transaction((tx) => tx.deleteDesired("d-other"))).toBe(true);
    expect(await fx.fleet.transaction((tx) => tx.deleteDesired("d-other"))).toBe(false);
    expect((await fx.fleet.transaction((tx) => tx.readDesired())).map((x) => x.id)).toEqual([d.id]);
  });

  it("lists completed, finished campaigns not yet recorded, oldest finish first, once", async () => {
    await insert("c1", { a: "succeeded" }, T0, "tester", { phase: "completed", at: T0 + 500 });
    await insert("c2", { b: "succeeded" }, T0 + 1, "tester", { phase: "completed", at: T0 + 300 });
    await insert("c3", { c: "rolled_back" }, T0 + 2, "tester", {
      phase: "rolled_back",
      at: T0 + 400,
    });
    await insert("c4", { d: "offered" }, T0 + 3);
    const first = await fx.fleet.transaction((tx) => tx.completionsToRecord());
    expect(first).toEqual([
      { id: "c2", createdBy: "tester", finishedAt: T0 + 300 },
      { id: "c1", createdBy: "tester", finishedAt: T0 + 500 },
    ]);
    await fx.fleet.transaction((tx) => tx.markRecorded(["c2"]));
    expect((await fx.fleet.transaction((tx) => tx.completionsToRecord())).map((c) => c.id)).toEqual(
      ["c1"],
    );
  });

  it("summarises campaigns by creator prefix and by id, with their failed nodes", async () => {
    await insert("d-x-1", { a: "failed", b: "succeeded", c: "timed_out" }, T0, "convergence:d-x", {
      phase: "completed",
      at: T0 + 10,
    });
    await insert("d-x-2", { d: "offered" }, T0 + 20, "convergence:d-x");
    await insert("c9", { e: "failed" }, T0 + 30, "alice");
    const mine = await fx.fleet.transaction((tx) => tx.campaignsCreatedBy("convergence:"));
    expect(mine).toEqual([
      {
        id: "d-x-1",
        createdBy: "convergence:d-x",
        phase: "completed",
        createdAt: T0,
        finishedAt: T0 + 10,
        failedNodeIds: ["a", "c"],
      },
      {
        id: "d-x-2",
        createdBy: "convergence:d-x",
        phase: "running",
        createdAt: T0 + 20,
        finishedAt: undefined,
        failedNodeIds: [],
      },
    ]);
    expect(
      (await fx.fleet.transaction((tx) => tx.campaignSummaries(["c9", "nope"]))).map((c) => c.id),
    ).toEqual(["c9"]);
    expect(await fx.fleet.transaction((tx) => tx.campaignSummaries([]))).toEqual([]);
  });

  it("stores plans, reads them newest first (live ones only when asked), and fences writes by version", async () => {
    const make = (id: string, now: number) =>
      createPlan({
        id,
        template: SPEC,
        groups: [{ name: "dev", selector: { labels: {}, pools: ["dev"], nodeIds: [] } }],
        waitMs: 1000,
        now,
        createdBy: "alice",
      });
    await fx.fleet.transaction((tx) => tx.insertPlan(make("p1", T0), at(0)));
    await fx.fleet.transaction((tx) => tx.insertPlan(make("p2", T0 + 5), at(5)));
    expect((await fx.fleet.transaction((tx) => tx.readPlans(false))).map((r) => r.plan.id)).toEqual(
      ["p2", "p1"],
    );
    const row = await fx.fleet.transaction((tx) => tx.readPlan("p1"));
    expect(row).toEqual({ plan: make("p1", T0), version: 1 });
    const ended = { ...make("p1", T0), phase: "halted" as const, message: "breached" };
    await fx.fleet.transaction((tx) => tx.writePlan(ended, 1, at(10)));
    expect(await fx.fleet.transaction((tx) => tx.readPlan("p1"))).toEqual({
      plan: ended,
      version: 2,
    });
    await expect(fx.fleet.transaction((tx) => tx.writePlan(ended, 1, at(11)))).rejects.toThrow(
      PlanVersionConflict,
    );
    expect((await fx.fleet.transaction((tx) => tx.readPlans(true))).map((r) => r.plan.id)).toEqual([
      "p2",
    ]);
    expect(await fx.fleet.transaction((tx) => tx.readPlan("nope"))).toBeUndefined();
  });

  it("inserts a campaign through its campaign transaction and audit rows in the same transaction", async () => {
    const c = campaignOf("c1", { a: "waiting" }, T0);
    await fx.fleet.transaction(async (tx) => {
      await tx.lockStarts();
      await tx.campaigns.insertCampaign({
        ...c,
        createdBy: "plan:p1",
        createdByIp: "",
        now: at(0),
      });
      await tx.insertAudits(
        [{ actor: "control", actorIp: "", action: "start", campaignId: "c1", message: "go" }],
        at(0),
      );
    });
    const summaries = await fx.fleet.transaction((tx) => tx.campaignsCreatedBy("plan:"));
    expect(summaries.map((s) => s.id)).toEqual(["c1"]);
  });

  it("records a command for a campaign as Control, pending for its next decision once committed", async () => {
    await insert("c1", { a: "waiting" }, T0);
    await fx.fleet
      .transaction(async (tx) => {
        await tx.insertCommand(
          {
            campaignId: "c1",
            kind: "abort",
            rollback: false,
            reason: "no",
            actor: "control",
            actorIp: "",
          },
          at(1),
        );
        throw new Error("rolled back");
      })
      .catch(() => {});
    expect(await fx.campaigns.transaction((tx) => tx.pendingCommands("c1"))).toEqual([]);
    await fx.fleet.transaction((tx) =>
      tx.insertCommand(
        {
          campaignId: "c1",
          kind: "abort",
          rollback: false,
          reason: "halted",
          actor: "control",
          actorIp: "",
        },
        at(1),
      ),
    );
    const pending = await fx.campaigns.transaction((tx) => tx.pendingCommands("c1"));
    expect(pending.map(({ id: _id, ...row }) => row)).toEqual([
      {
        kind: "abort",
        rollback: false,
        gate: null,
        reason: "halted",
        actor: "control",
        actor_ip: "",
      },
    ]);
  });
});
