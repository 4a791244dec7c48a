import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import {
  BatchState,
  type Campaign,
  CampaignPhase,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  OLD,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

const count = (c: Campaign | undefined, state: NodeState) =>
  c?.counts.find((x) => x.state === state)?.count ?? 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("pause, resume and abort by an operator", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  const fleets = new Map<string, Fleet>();
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    for (const group of ["pause", "abort", "rollback"]) {
      fleets.set(
        group,
        await fx.fleet({ count: 100, idPrefix: group, labels: { group }, restartMs: [150, 300] }),
      );
    }
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  const start = async (group: string) => {
    const spec = quickSpec(NEW, [5, 100], {
      selector: { labels: { group } },
      concurrency: 10,
      disruptionBudgetPercent: 100,
    });
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    // Well into batch 2: some nodes done, most still waiting.
    await waitForCampaign(
      fx.campaigns,
      id,
      (c) =>
        c.currentBatch === 1 && count(c, NodeState.SUCCEEDED) + count(c, NodeState.VERIFYING) >= 10,
    );
    return id;
  };

  it("pauses during a batch (no new offers), then resumes to completion", async () => {
    const id = await start("pause");
    const paused = (await fx.campaigns.pauseCampaign({ id, reason: "look at metrics" })).campaign;
    expect(paused?.phase).toBe(CampaignPhase.PAUSED);
    const waitingAtPause = count(paused, NodeState.WAITING);
    expect(waitingAtPause).toBeGreaterThan(0);
    await sleep(1200);
    const later = await waitForCampaign(fx.campaigns, id, () => true);
    expect(later.phase).toBe(CampaignPhase.PAUSED);
    expect(count(later, NodeState.WAITING)).toBe(waitingAtPause);
    const inFlight = [NodeState.OFFERED, NodeState.APPLYING, NodeState.RESTARTING];
    expect(inFlight.map((s) => count(later, s))).toEqual([0, 0, 0]);
    await expect(fx.campaigns.pauseCampaign({ id })).rejects.toThrow(/only a running campaign/);

    const resumed = (await fx.campaigns.resumeCampaign({ id })).campaign;
    expect(resumed?.phase).toBe(CampaignPhase.RUNNING);
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    expect(count(done, NodeState.SUCCEEDED)).toBe(100);
    const batch = done.batches[1]!;
    const wall =
      timestampDate(batch.endedAt!).getTime() - timestampDate(batch.startedAt!).getTime();
    const elapsed = Number(batch.elapsed?.seconds ?? 0n) * 1000 + (batch.elapsed?.nanos ?? 0) / 1e6;
    expect(elapsed).toBeLessThanOrEqual(wall - 1100);

    const { events } = await fx.audit.listAuditEvents({ campaignId: id });
    const actions = events.map((e) => `${e.action}:${e.actor}`).reverse();
    expect(actions).toEqual(
      expect.arrayContaining(["start:admin", "pause:admin", "resume:admin", "finish:control"]),
    );
    expect(actions.indexOf("pause:admin")).toBeLessThan(actions.indexOf("resume:admin"));
    expect(events.find((e) => e.action === "pause")?.message).toMatch(/look at metrics/);
    expect(events.find((e) => e.action === "pause")?.actorIp).not.toBe("");
  });

  it("aborts without rollback at once: waiting nodes canceled, in-flight nodes finish", async () => {
    const id = await start("abort");
    const abortedAt = Date.now();
    const aborted = (await fx.campaigns.abortCampaign({ id, reason: "enough" })).campaign;
    expect(aborted?.phase).toBe(CampaignPhase.ABORTED);
    expect(aborted?.code).toBe("aborted");
    expect(count(aborted, NodeState.WAITING)).toBe(0);
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ABORTED);
    expect(done.batches[1]?.state).toBe(BatchState.CANCELED);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const canceled = nodes.filter((n) => n.state === NodeState.CANCELED);
    expect(canceled.length).toBeGreaterThan(0);
    for (const n of nodes) {
      if (n.offeredAt) expect(timestampDate(n.offeredAt).getTime()).toBeLessThan(abortedAt + 50);
    }
    const fleet = fleets.get("abort")!;
    for (const n of canceled) expect(Object.keys(fleet.agent(n.nodeId).state.handled)).toEqual([]);
    const { events } = await fx.audit.listAuditEvents({ campaignId: id, action: "abort" });
    expect(events.map((e) => e.actor)).toEqual(["admin"]);
  });

  it("aborts with rollback: the current batch goes back, the passed batch stays, and it ends aborted", async () => {
    const id = await start("rollback");
    const aborted = (await fx.campaigns.abortCampaign({ id, rollback: true })).campaign;
    expect([CampaignPhase.ROLLING_BACK, CampaignPhase.ABORTED]).toContain(aborted?.phase);
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ABORTED);
    expect(done.code).toBe("aborted");
    expect(done.message).toMatch(/batch 2 rolled back$/);
    expect(done.batches.map((b) => b.state)).toEqual([BatchState.PASSED, BatchState.ROLLED_BACK]);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const fleet = fleets.get("rollback")!;
    const rolledBack = nodes.filter((n) => n.state === NodeState.ROLLED_BACK);
    expect(rolledBack.length).toBeGreaterThanOrEqual(10);
    for (const n of nodes) {
      const agent = fleet.agent(n.nodeId);
      if (n.batch === 0) expect(agent.version).toBe(NEW);
      else expect([NodeState.ROLLED_BACK, NodeState.CANCELED]).toContain(n.state);
    }
    await fleet.waitUntil(
      () => nodes.filter((n) => n.batch === 1).every((n) => fleet.agent(n.nodeId).version === OLD),
      10_000,
      "batch 2 back on the old release",
    );
    expect(fleet.stats().duplicateApplications).toBe(0);
    const { events } = await fx.audit.listAuditEvents({ campaignId: id });
    const actions = events.map((e) => `${e.action}:${e.actor}`);
    expect(actions).toEqual(
      expect.arrayContaining(["abort:admin", "rollback:admin", "finish:control"]),
    );
  });
});
