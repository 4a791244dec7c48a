/**
 * Who joins a campaign, through the real Control and admin API: nodes whose platform the
 * release has no artifact for are skipped `platform_unsupported` at plan and at start (never
 * failures, so a mixed fleet does not breach), and a ramp may take no more steps than the
 * policy's batch limit.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { PlanService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  nodesByState,
  quickSpec,
  refusal,
  waitForCampaign,
} from "./campaign-fixture.js";

describe("admission of a mixed-platform fleet and of ramps", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let arm: string[];
  beforeAll(async () => {
    fx = await campaignFixture();
    // The test release carries a linux-amd64 artifact only.
    await fx.register(NEW);
    await fx.fleet({ count: 20, idPrefix: "amd", labels: { group: "mixed" } });
    const arms = await fx.fleet({
      count: 5,
      idPrefix: "arm",
      labels: { group: "mixed" },
      platform: "linux-arm64",
    });
    arm = arms.agents.map((a) => a.nodeId).sort();
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  const mixed = { labels: { group: "mixed" } };

  it("plans nodes of a platform the release lacks as skipped platform_unsupported, saying how many and why", async () => {
    const plan = await fx.campaigns.planCampaign({
      spec: quickSpec(NEW, [5, 50, 100], { selector: mixed }),
    });
    expect(plan.totalNodes).toBe(25);
    const skip = plan.skipped.find((s) => s.code === "platform_unsupported");
    expect([...(skip?.nodeIds ?? [])].sort()).toEqual(arm);
    expect(skip?.message).toBe(`release ${NEW} has no artifact for linux-arm64`);
    expect(plan.unsupportedNodeIds).toEqual([]);
    expect((await fx.campaigns.listCampaigns({})).campaigns).toEqual([]);
  });

  it("starts over a mixed fleet, skips the arm64 nodes platform_unsupported and completes without a breach", async () => {
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 50, 100], { selector: mixed, disruptionBudgetPercent: 100 }),
    });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const skipped = nodes.filter((n) => n.state === NodeState.SKIPPED);
    expect(skipped.map((n) => n.nodeId).sort()).toEqual(arm);
    for (const n of skipped) {
      expect(n.code).toBe("platform_unsupported");
      expect(n.message).toBe(`release ${NEW} has no artifact for linux-arm64`);
    }
    expect(done.batches.reduce((sum, b) => sum + b.failed, 0)).toBe(0);
    expect(done.batches.reduce((sum, b) => sum + b.offerable, 0)).toBe(20);
    expect((await nodesByState(fx.campaigns, id)).get("succeeded")).toHaveLength(20);
  });

  it("refuses a ramp that needs more steps than the policy's batch limit at plan, start and plan start, naming the limit and the steps", async () => {
    const before = (await fx.campaigns.listCampaigns({})).campaigns.length;
    const spec = {
      targetVersion: NEW,
      selector: mixed,
      ramp: { startPerMinute: 1 / 60, factor: 1.01 },
    };
    for (const call of [
      () => fx.campaigns.planCampaign({ spec }),
      () => fx.campaigns.startCampaign({ spec }),
    ]) {
      const refused = await refusal(call());
      expect(refused.code).toBe(Code.InvalidArgument);
      expect(refused.message).toMatch(/the ramp would need 25 steps for 25 nodes/);
      expect(refused.message).toMatch(/at most 10 batches \(policy\.maxBatches\)/);
    }
    const eleven = await refusal(
      fx.campaigns.startCampaign({
        spec: quickSpec(NEW, [1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 100], { selector: mixed }),
      }),
    );
    expect(eleven.message).toMatch(/a campaign has 1 to 10 batches, not 11/);
    const plan = await refusal(
      fx.tc.client(PlanService).startPlan({
        template: spec,
        groups: [{ name: "all", selector: { labels: { group: "mixed" } } }],
      }),
    );
    expect(plan.code).toBe(Code.InvalidArgument);
    expect(plan.message).toMatch(/group 1 \(all\): the ramp would need 25 steps for 25 nodes/);
    expect((await fx.tc.client(PlanService).listPlans({})).plans).toEqual([]);
    expect((await fx.campaigns.listCampaigns({})).campaigns).toHaveLength(before);
  });
});
