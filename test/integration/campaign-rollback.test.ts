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
  nodesByState,
  OLD,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

describe("a bad release over 500 simulated agents", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let fleet: Fleet;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    fleet = await fx.fleet({ count: 500, failVersions: [NEW] });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("fails the canary batch, rolls it back, and touches no node outside it", async () => {
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 25, 100], { disruptionBudgetPercent: 100 }),
    });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    expect(done.code).toBe("batch_failed");
    expect(done.stoppedByNodeId).not.toBe("");
    expect(done.batches.map((b) => b.state)).toEqual([
      BatchState.ROLLED_BACK,
      BatchState.CANCELED,
      BatchState.CANCELED,
    ]);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const canaries = nodes.filter((n) => n.batch === 0);
    expect(canaries).toHaveLength(25);
    for (const n of canaries) {
      expect([NodeState.FAILED, NodeState.ROLLED_BACK]).toContain(n.state);
    }
    expect(canaries.filter((n) => n.state === NodeState.FAILED).length).toBeGreaterThan(1);
    const failed = canaries.find((n) => n.state === NodeState.FAILED);
    expect(failed?.code).toBe("apply_failed");
    const others = nodes.filter((n) => n.batch > 0);
    expect(others).toHaveLength(475);
    for (const n of others) expect(n.state).toBe(NodeState.CANCELED);
    const canaryIds = new Set(canaries.map((n) => n.nodeId));
    for (const agent of fleet.agents) {
      expect(agent.version).toBe(OLD);
      if (!canaryIds.has(agent.nodeId)) expect(Object.keys(agent.state.handled)).toEqual([]);
    }
    expect(fleet.stats().duplicateApplications).toBe(0);
    const states = await nodesByState(fx.campaigns, id);
    expect(states.get("canceled")).toHaveLength(475);
  });
});
