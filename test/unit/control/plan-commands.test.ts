/**
 * The plan abort (control/admin/plan-commands.ts) on the memory adapter, as the simulated
 * operator runs it: it ends the plan with its audit row and records an abort command for the
 * running group's campaign, with the rollback asked for; a plan that is not running is refused
 * and nothing is written.
 */
import { describe, expect, it } from "vitest";
import { abortRolloutPlan } from "../../../control/admin/plan-commands.js";
import {
  createCampaign,
  createPlan,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import { ManualClock } from "../../../control/manual-clock.js";

const T0 = Date.UTC(2031, 0, 1);
const actor = { name: "alice", ip: "10.0.0.9" };
const SPEC = resolveSpec({
  targetVersion: "2.0.0",
  selector: { pools: ["p"] },
  batches: [{ percent: 100, minDurationMs: 0 }],
});

async function world() {
  const store = new MemoryCampaignStore(new ManualClock(T0));
  const fleet = new MemoryFleetStore(store);
  const c = createCampaign({
    id: "p1-g1",
    spec: SPEC,
    plan: planCampaign(SPEC, [
      {
        id: "n1",
        labels: {},
        pool: "p",
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: "1.0.0",
      },
    ]),
    target: { version: "2.0.0", sequence: 2 },
    now: T0,
  });
  const base = createPlan({
    id: "p1",
    template: SPEC,
    groups: [
      { name: "a", selector: { labels: {}, pools: ["p"], nodeIds: [] } },
      { name: "b", selector: { labels: {}, pools: ["q"], nodeIds: [] } },
    ],
    waitMs: 0,
    now: T0,
    createdBy: "alice",
  });
  const plan = {
    ...base,
    groups: base.groups.map((g, i) => (i === 0 ? { ...g, campaignId: "p1-g1", startedAt: T0 } : g)),
  };
  await fleet.transaction(async (tx) => {
    await tx.campaigns.insertCampaign({
      ...c,
      createdBy: "plan:p1",
      createdByIp: "",
      now: new Date(T0),
    });
    await tx.insertPlan(plan, new Date(T0));
  });
  return { store, fleet };
}

describe("plan abort over the memory fleet store", () => {
  it("ends the plan with its audit row and records an abort with rollback for its running campaign", async () => {
    const { store, fleet } = await world();
    const done = await abortRolloutPlan(fleet, {
      id: "p1",
      reason: "freeze",
      rollback: true,
      actor,
      now: new Date(T0 + 5000),
    });
    expect(done.abortedCampaign).toBe("p1-g1");
    expect(done.plan).toMatchObject({ phase: "aborted", message: "aborted: freeze" });
    expect(done.plan.groups[0]?.outcome).toBe("aborted");
    expect(fleet.tables.plans.get("p1")).toMatchObject({ version: 2, plan: { phase: "aborted" } });
    expect(
      store.tables.commands.map(({ campaignId, kind, rollback, reason, actor }) => ({
        campaignId,
        kind,
        rollback,
        reason,
        actor,
      })),
    ).toEqual([
      {
        campaignId: "p1-g1",
        kind: "abort",
        rollback: true,
        reason: "plan p1 aborted: freeze",
        actor: "alice",
      },
    ]);
    expect(store.tables.audits.filter((a) => a.action === "plan.abort")).toEqual([
      {
        actor: "alice",
        actorIp: "10.0.0.9",
        action: "plan.abort",
        campaignId: "p1",
        message: "plan p1 aborted: freeze",
        time: new Date(T0 + 5000),
      },
    ]);
  });

  it("refuses a plan that is not running, or unknown, and writes nothing more", async () => {
    const { store, fleet } = await world();
    const abort = (id: string) =>
      abortRolloutPlan(fleet, { id, reason: "", rollback: false, actor, now: new Date(T0) });
    await abort("p1");
    const commands = store.tables.commands.length;
    const audits = store.tables.audits.length;
    await expect(abort("p1")).rejects.toMatchObject({
      code: "campaign_state",
      message: "plan p1 is aborted; only a running plan can be aborted",
    });
    await expect(abort("nope")).rejects.toMatchObject({
      code: "plan_not_found",
      message: 'no plan with id "nope"',
    });
    expect(store.tables.commands.length).toBe(commands);
    expect(store.tables.audits.length).toBe(audits);
  });
});
