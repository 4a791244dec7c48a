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

describe("a healthy campaign over 500 simulated agents", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let fleet: Fleet;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    fleet = await fx.fleet({ count: 500 });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("completes three batches, upgrading every node once and confirming it", async () => {
    const started = await fx.campaigns.startCampaign({ spec: quickSpec(NEW, [5, 25, 100]) });
    const id = started.campaign?.id ?? "";
    expect(id).not.toBe("");
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.batches.map((b) => b.state)).toEqual([
      BatchState.PASSED,
      BatchState.PASSED,
      BatchState.PASSED,
    ]);
    expect(done.batches.map((b) => b.nodeCount)).toEqual([25, 100, 375]);
    expect(done.counts).toEqual([
      expect.objectContaining({ state: NodeState.SUCCEEDED, count: 500 }),
    ]);
    await fleet.waitUntil((f) => f.stats().versions[NEW] === 500, 10_000, "all on the target");
    expect(fleet.stats().versions[OLD]).toBeUndefined();
    expect(fleet.stats().duplicateApplications).toBe(0);
    const confirmed = fleet.agents.filter((a) => a.confirmedSequence === 20n).length;
    await fleet.waitUntil(
      (f) => f.agents.every((a) => a.confirmedSequence === 20n),
      10_000,
      `every agent confirmed (now ${confirmed})`,
    );
  });
});
