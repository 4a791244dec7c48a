/**
 * Attack: a viewer (or anyone holding a viewer token, such as a dashboard on a shared
 * screen) reads a webhook gate's secret. The operator guide promises that a webhook URL is a
 * secret and that "every API answer" shows only its origin; `GetCampaign`'s spec does, but the
 * gate's label in the breach message (`campaign.message`), the campaign's audit events and
 * `GetCampaignWaits` (what `agentctl campaign why` and the dashboard's "Waits for" print) are
 * built by `gateLabel`, which writes the whole URL, path and query (its credential) included.
 *
 * Expected refusal: no answer a viewer can get contains the URL's path or query.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService, OnBreach } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitsService } from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

const SECRET = "T0K3N-in-the-path";

describe("a webhook gate's secret URL", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let hook: Server;
  let hookUrl = "";
  let calls = 0;

  beforeAll(async () => {
    hook = createServer((req, res) => {
      calls++;
      req.resume();
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    const port = (hook.address() as AddressInfo).port;
    hookUrl = `http://127.0.0.1:${port}/services/${SECRET}?key=${SECRET}`;
    f = await campaignFixture();
    await f.register(NEW);
    await f.fleet({ count: 2, idPrefix: "hook", labels: { group: "hook" } });
  });
  afterAll(async () => {
    await f?.stop();
    hook?.closeAllConnections();
    await new Promise<void>((resolve) => hook?.close(() => resolve()) ?? resolve());
  });

  it("is never shown to a viewer: not in the campaign, its waits, nor the audit log", async () => {
    const spec = quickSpec(NEW, [1, 100], {
      selector: { labels: { group: "hook" } },
      gates: [`webhook ${hookUrl}`],
      onBreach: OnBreach.PAUSE,
      disruptionBudgetPercent: 100,
    });
    const started = await f.campaigns.startCampaign({ spec });
    const id = started.campaign?.id ?? "";
    await waitForCampaign(f.campaigns, id, (c) => c.message.includes("gate 1"), 90_000);
    expect(calls).toBeGreaterThan(0);

    const viewer = f.tc.viewerToken;
    const sources: Record<string, unknown> = {
      campaign: await f.tc.client(CampaignService, viewer).getCampaign({ id }),
      list: await f.tc.client(CampaignService, viewer).listCampaigns({}),
      waits: await f.tc.client(CampaignWaitsService, viewer).getCampaignWaits({ id }),
      audit: await f.tc.client(AuditService, viewer).listAuditEvents({}),
    };
    const text = (v: unknown) =>
      JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
    expect(text(sources.campaign)).toContain("127.0.0.1");
    const leaks = Object.entries(sources)
      .filter(([, v]) => text(v).includes(SECRET))
      .map(([k]) => k);
    expect(leaks).toEqual([]);
  });
});
