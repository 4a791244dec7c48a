/**
 * The progress deadline against a real Control (real PostgreSQL, the real worker and metrics,
 * a simulated agent on a real stream): an agent that restarts for its upgrade and never comes
 * back, a reconnect timeout of ten minutes and a progress deadline of three seconds. The
 * campaign is reported stalled — one `campaign.stalled` audit row and the
 * `agent_control_campaign_stalled` gauge at 1 for it — while it keeps running: no breach, no
 * failed node, no rollback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

const STUCK = "stuck-00001";

describe("a campaign past its progress deadline", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture();
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({
      count: 1,
      idPrefix: "stuck",
      behaviours: { [STUCK]: { upgrade: "no-return" } },
    });
  });
  afterAll(async () => {
    await f?.stop();
  });

  const stalledGauge = async (id: string): Promise<string | undefined> => {
    const text = await (await fetch(`${f.tc.adminUrl}/metrics`)).text();
    return new RegExp(`^agent_control_campaign_stalled\\{campaign="${id}"\\} (\\S+)$`, "m").exec(
      text,
    )?.[1];
  };

  it("raises the audit row and the gauge, and does not breach", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        NEW,
        "--batches",
        "5:0s,100:0s",
        "--reconnect-timeout",
        "10m",
        "--progress-deadline",
        "3s",
        "--yes",
      ],
      env,
    );
    expect(started.stderr).not.toMatch(/error|failed|invalid/i);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    await waitForCampaign(f.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.RESTARTING && n.count === 1),
    );
    expect(await stalledGauge(id)).toBeUndefined();

    await expect.poll(() => stalledGauge(id), { timeout: 60_000, interval: 250 }).toBe("1");
    const audit = await f.audit.listAuditEvents({ campaignId: id, action: "campaign.stalled" });
    expect(audit.events).toHaveLength(1);
    expect(audit.events[0]?.actor).toBe("control");
    expect(audit.events[0]?.message).toMatch(
      new RegExp(
        `^campaign ${id}: no progress for \\d+ s \\(progress deadline 3 s\\) in batch 1, phase running; see agentctl campaign why ${id}$`,
      ),
    );

    // Reported, nothing else: still running, the node still restarting, no breach row.
    const now = await f.campaigns.getCampaign({ id });
    expect(now.campaign?.phase).toBe(CampaignPhase.RUNNING);
    expect(now.nodes.map((n) => n.state)).toEqual([NodeState.RESTARTING]);
    const all = await f.audit.listAuditEvents({ campaignId: id });
    expect(all.events.map((e) => e.action)).not.toContain("breach");
    expect(all.events.map((e) => e.action)).not.toContain("rollback");
    // One row per stall, however many decisions see it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const again = await f.audit.listAuditEvents({ campaignId: id, action: "campaign.stalled" });
    expect(again.events).toHaveLength(1);

    // The series goes when the campaign ends.
    await agentctl(["campaign", "abort", id, "--yes"], env);
    await waitForCampaign(f.campaigns, id, (c) => c.phase === CampaignPhase.ABORTED);
    await expect.poll(() => stalledGauge(id), { timeout: 30_000, interval: 250 }).toBeUndefined();
  });
});
