import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CampaignFixture, campaignFixture, NEW, OLD } from "./campaign-fixture.js";

/** POSTs plain JSON the way `curl -d '{…}'` does and returns the status and parsed body. */
async function postJson(url: string, token: string, body: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe("campaigns over plain JSON (curl)", () => {
  let fx: CampaignFixture;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    await fx.fleet({ count: 20, version: OLD, seed: 11 });
  });
  afterAll(async () => {
    await fx?.stop();
  });

  const url = (method: string) =>
    `${fx.tc.adminUrl}/agentcontrol.admin.v1.CampaignService/${method}`;

  it("starts a campaign and reads it back with JSON bodies", async () => {
    const started = await postJson(url("StartCampaign"), fx.tc.operatorToken, {
      spec: {
        targetVersion: NEW,
        batches: [
          { percent: 5, minDuration: "0s" },
          { percent: 100, minDuration: "0s" },
        ],
        failureThresholdPercent: 10,
        reason: "started with curl",
      },
    });
    expect(started.status).toBe(200);
    const id = started.body.campaign.id as string;
    expect(started.body.campaign.spec.targetVersion).toBe(NEW);

    let got = await postJson(url("GetCampaign"), fx.tc.viewerToken, { id });
    for (let i = 0; i < 200 && !got.body.campaign.finishedAt; i++) {
      await new Promise((r) => setTimeout(r, 100));
      got = await postJson(url("GetCampaign"), fx.tc.viewerToken, { id });
    }
    expect(got.status).toBe(200);
    expect(got.body.campaign.phase).toBe("CAMPAIGN_PHASE_COMPLETED");
    expect(got.body.nodes).toHaveLength(20);
    expect(got.body.nodes.every((n: { state: string }) => n.state === "NODE_STATE_SUCCEEDED")).toBe(
      true,
    );
  });

  it("answers a bad JSON request with a Connect error a person can act on", async () => {
    const bad = await postJson(url("StartCampaign"), fx.tc.operatorToken, {
      spec: { targetVersion: NEW, batches: [{ percent: 50 }, { percent: 40 }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_argument");
    expect(String(bad.body.message)).toMatch(/increas|first batch/i);
  });
});
