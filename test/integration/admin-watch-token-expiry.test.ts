/**
 * A removed or expired admin token ends the WatchCampaign streams it opened, instead of
 * keeping a live view of the fleet for whoever still holds the old token.
 */
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256OfText } from "../../control/auth/secrets.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type CampaignFixture, campaignFixture, NEW } from "./campaign-fixture.js";

const SHORT = "short-lived-viewer-token-0123456789";

describe("a WatchCampaign stream outlives no token", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  beforeAll(async () => {
    fx = await campaignFixture({
      adminTokens: [
        {
          name: "viewer",
          role: "viewer",
          sha256: sha256OfText("viewer-token-for-tests-0123456789"),
        },
        {
          name: "short",
          role: "viewer",
          sha256: sha256OfText(SHORT),
          expires: new Date(Date.now() + 20_000).toISOString(),
        },
      ],
    });
    await fx.register(NEW);
    await fx.fleet({ count: 2, idPrefix: "watch" });
  }, 120_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("ends the stream UNAUTHENTICATED once its token expires", async () => {
    const started = await fx.campaigns.startCampaign({
      // A long first batch: the campaign stays running while it is watched.
      spec: {
        targetVersion: NEW,
        batches: [5, 100].map((percent) => ({
          percent,
          minDuration: { seconds: 3600n, nanos: 0 },
        })),
      },
    });
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${SHORT}`);
      return next(req);
    };
    const watcher = createClient(
      CampaignService,
      createConnectTransport({
        baseUrl: fx.tc.adminUrl,
        httpVersion: "1.1",
        interceptors: [bearer],
      }),
    );
    let updates = 0;
    let ended: unknown;
    try {
      for await (const _ of watcher.watchCampaign({ id: started.campaign?.id ?? "" })) updates += 1;
    } catch (error) {
      ended = error;
    }
    expect(updates).toBeGreaterThan(0);
    expect(ended).toBeInstanceOf(ConnectError);
    expect((ended as ConnectError).code).toBe(Code.Unauthenticated);
    expect((ended as ConnectError).rawMessage).toMatch(/token expired at/);
  });
});
