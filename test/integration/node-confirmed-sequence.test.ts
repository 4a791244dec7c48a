/**
 * Control's record of a node's confirmed sequence follows what the Agent confirmed: right
 * after a campaign confirmed its nodes, the admin API's node (what `agentctl node show`
 * prints) says the target's sequence, without waiting for the node's next Hello. Real
 * PostgreSQL, a real Control, simulated agents over real streams.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

describe("the confirmed sequence Control records", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let fleet: Fleet;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    fleet = await fx.fleet({ count: 3 });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("is the target's sequence as soon as each agent reports the confirm, on the same stream", async () => {
    const nodes = fx.tc.client(NodeService);
    const before = await Promise.all(
      fleet.agents.map(async (a) => (await nodes.getNode({ nodeId: a.nodeId })).node),
    );
    expect(before.map((n) => n?.confirmedSequence)).toEqual([0n, 0n, 0n]);
    const started = await fx.campaigns.startCampaign({ spec: quickSpec(NEW, [5, 100]) });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    await fleet.waitUntil(
      (f) => f.agents.every((a) => a.confirmedSequence === 20n),
      10_000,
      "every agent confirmed",
    );
    const deadline = Date.now() + 5000;
    let after = await Promise.all(
      fleet.agents.map(async (a) => (await nodes.getNode({ nodeId: a.nodeId })).node),
    );
    while (after.some((n) => n?.confirmedSequence !== 20n) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      after = await Promise.all(
        fleet.agents.map(async (a) => (await nodes.getNode({ nodeId: a.nodeId })).node),
      );
    }
    expect(after.map((n) => [n?.agentVersion, n?.confirmedSequence])).toEqual([
      [NEW, 20n],
      [NEW, 20n],
      [NEW, 20n],
    ]);
  });
});
