import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import {
  BatchState,
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

/** 102 nodes with batches 1 % / 100 % make a 2-node canary batch and a 100-node batch. */
const GROUP = 102;

describe("the failure threshold of a 100-node batch (5 %)", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  const fleets = new Map<string, Fleet>();
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    for (const group of ["six", "five"]) {
      fleets.set(group, await fx.fleet({ count: GROUP, idPrefix: group, labels: { group } }));
    }
    fleets.set(
      "config",
      await fx.fleet({
        count: 20,
        idPrefix: "config",
        labels: { group: "config" },
        behaviours: { "config-00007": { upgrade: "config-fail" } },
        configFailDelayMs: 100,
      }),
    );
    fleets.set(
      "health",
      await fx.fleet({ count: 4, idPrefix: "health", labels: { group: "health" } }),
    );
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  const run = async (group: string, failing: number) => {
    const fleet = fleets.get(group)!;
    const spec = quickSpec(NEW, [1, 100], {
      selector: { labels: { group } },
      failureThresholdPercent: 5,
      disruptionBudgetPercent: 100,
    });
    const plan = await fx.campaigns.planCampaign({ spec });
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([2, 100]);
    const bad = plan.batches[1]!.nodeIds.slice(0, failing);
    for (const nodeId of bad) fleet.agent(nodeId).setBehaviour({ upgrade: "fail" });
    const started = await fx.campaigns.startCampaign({ spec });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    return { done, nodes, bad, plan, fleet };
  };

  it("rolls back the 100-node batch when 6 of its nodes fail", async () => {
    const { done, nodes, bad, plan, fleet } = await run("six", 6);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    expect(done.code).toBe("batch_failed");
    expect(done.batches.map((b) => b.state)).toEqual([BatchState.PASSED, BatchState.ROLLED_BACK]);
    expect(done.batches[1]?.failed).toBe(6);
    expect(done.batches[1]?.offerable).toBe(100);
    for (const n of nodes.filter((n) => n.batch === 1)) {
      if (bad.includes(n.nodeId)) expect(n.state).toBe(NodeState.FAILED);
      else expect([NodeState.ROLLED_BACK, NodeState.CANCELED]).toContain(n.state);
    }
    // The passed canary batch stays upgraded; the rolled-back batch is on the old release.
    for (const nodeId of plan.batches[0]!.nodeIds) expect(fleet.agent(nodeId).version).toBe(NEW);
    await fleet.waitUntil(
      () => plan.batches[1]!.nodeIds.every((nodeId) => fleet.agent(nodeId).version === OLD),
      10_000,
      "batch 2 back on the old release",
    );
    expect(fleet.stats().duplicateApplications).toBe(0);
  });

  it("completes when only 5 of the 100 nodes fail", async () => {
    const { done, nodes, bad } = await run("five", 5);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.batches.map((b) => b.state)).toEqual([BatchState.PASSED, BatchState.PASSED]);
    expect(done.batches[1]?.failed).toBe(5);
    const failed = nodes.filter((n) => n.state === NodeState.FAILED).map((n) => n.nodeId);
    expect(failed.sort()).toEqual([...bad].sort());
    expect(nodes.filter((n) => n.state === NodeState.SUCCEEDED)).toHaveLength(GROUP - 5);
  });

  it("fails a node whose configuration fails after the upgrade while its batch is watched", async () => {
    const spec = quickSpec(NEW, [5, 100], {
      selector: { labels: { group: "config" } },
      failureThresholdPercent: 100,
      disruptionBudgetPercent: 100,
    });
    // Both batches are watched for 3 s: the canary order is keyed by the fleet's own secret,
    // so config-00007 may be the first batch's one node as well as one of the second's.
    spec.batches = [
      { percent: 5, minDuration: { seconds: 3n, nanos: 0 } },
      { percent: 100, minDuration: { seconds: 3n, nanos: 0 } },
    ];
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const failed = nodes.filter((n) => n.state === NodeState.FAILED);
    expect(failed.map((n) => [n.nodeId, n.code])).toEqual([
      ["config-00007", "config_apply_failed"],
    ]);
    expect(nodes.filter((n) => n.state === NodeState.SUCCEEDED)).toHaveLength(19);
  });

  it("rolls back the canary whose simulated new version fails its health check, back on the old one", async () => {
    const fleet = fleets.get("health")!;
    const spec = quickSpec(NEW, [5, 100], {
      selector: { labels: { group: "health" } },
      disruptionBudgetPercent: 100,
    });
    const plan = await fx.campaigns.planCampaign({ spec });
    const [canary] = plan.batches[0]!.nodeIds;
    fleet.agent(canary!).setBehaviour({ upgrade: "health-fail" });
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect([done.phase, done.code]).toEqual([CampaignPhase.ROLLED_BACK, "batch_failed"]);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(nodes.find((n) => n.nodeId === canary)).toMatchObject({
      state: NodeState.FAILED,
      code: "health_check_failed",
      message: expect.stringContaining(`${NEW} failed health check "simulated"`),
    });
    expect(nodes.filter((n) => n.batch === 1).map((n) => n.state)).toEqual(
      Array(3).fill(NodeState.CANCELED),
    );
    for (const agent of fleet.agents) expect(agent.version).toBe(OLD);
    expect(fleet.stats().duplicateApplications).toBe(0);
  });
});
