/**
 * A breach never rolls a node back onto a yanked release, through the real Control: with the
 * fleet's current release (OLD) yanked, `campaign plan` names every node as one a breach would
 * not roll back, the start's audit row counts them, and the canary batch that breaches ends
 * rolled back with no node rolled back onto OLD (a node still upgrading at the breach would end
 * failed rollback_withheld; the engine's rules are in test/unit/campaign/rollback-yanked.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  OLD,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

describe("a breach over a fleet whose previous release is yanked", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(OLD);
    await fx.register(NEW);
    await fx.fleet({ count: 20, failVersions: [NEW] });
    await fx.tc.client(ReleaseService).yankRelease({ version: OLD, reason: "corrupts the cache" });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("plans, starts and rolls back without ever sending a node back onto the yanked release", async () => {
    const spec = quickSpec(NEW, [5, 100], { disruptionBudgetPercent: 100 });
    const plan = await fx.campaigns.planCampaign({ spec });
    expect(plan.yankedPreviousNodeIds).toHaveLength(20);
    const started = await fx.campaigns.startCampaign({ spec });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const batch0 = nodes.filter((n) => n.batch === 0);
    for (const n of batch0) {
      // Nothing rolled back onto OLD: failed (apply_failed, or withheld while upgrading).
      expect(n.state).not.toBe(NodeState.ROLLED_BACK);
      expect(n.state).not.toBe(NodeState.ROLLING_BACK);
      if (n.code === "rollback_withheld") {
        expect(n.rollbackResult).toBe("rollback_withheld");
        expect(n.message).toContain(`previous release ${OLD} was yanked`);
      }
    }
    const { events } = await fx.audit.listAuditEvents({ campaignId: id, action: "start" });
    const start = events.find((e) => e.action === "start" && e.campaignId === id);
    expect(start?.message).toContain("20 node(s) run a yanked release");
  });
});
