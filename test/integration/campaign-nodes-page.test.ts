import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CampaignNode,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  OLD,
  waitForCampaign,
} from "./campaign-fixture.js";

describe("ListCampaignNodes", () => {
  let fx: CampaignFixture;
  let id = "";
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    await fx.fleet({ count: 12, version: OLD, seed: 15 });
    // The canary batch (1 node) upgrades and stays verifying for its hour: 11 nodes stay waiting.
    const started = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        batches: [
          { percent: 5, minDuration: { seconds: 3600n, nanos: 0 } },
          { percent: 100, minDuration: { seconds: 0n, nanos: 0 } },
        ],
      },
    });
    id = started.campaign?.id ?? "";
    await waitForCampaign(fx.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 1),
    );
  });
  afterAll(async () => {
    await fx?.stop();
  });

  it("pages through every node in canary order, each once, as GetCampaign lists them", async () => {
    const viewer = fx.tc.client(CampaignService, fx.tc.viewerToken);
    const seen: CampaignNode[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await viewer.listCampaignNodes({ campaignId: id, pageSize: 5, pageToken });
      expect(page.nodes.length).toBeLessThanOrEqual(5);
      seen.push(...page.nodes);
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== "");
    expect(pages).toBe(3);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(seen.map((n) => n.nodeId)).toEqual(nodes.map((n) => n.nodeId));
    expect(seen.map((n) => n.order)).toEqual([...seen.map((n) => n.order)].sort((a, b) => a - b));
  });

  it("returns only the nodes in the states asked for", async () => {
    const verifying = await fx.campaigns.listCampaignNodes({
      campaignId: id,
      states: [NodeState.VERIFYING],
    });
    expect(verifying.nodes.map((n) => [n.batch, n.state])).toEqual([[0, NodeState.VERIFYING]]);
    expect(verifying.nextPageToken).toBe("");
    const waiting = await fx.campaigns.listCampaignNodes({
      campaignId: id,
      states: [NodeState.WAITING],
      pageSize: 10,
    });
    expect(waiting.nodes).toHaveLength(10);
    expect(waiting.nodes.every((n) => n.state === NodeState.WAITING && n.batch === 1)).toBe(true);
    const rest = await fx.campaigns.listCampaignNodes({
      campaignId: id,
      states: [NodeState.WAITING],
      pageToken: waiting.nextPageToken,
    });
    expect(rest.nodes).toHaveLength(1);
    expect(rest.nextPageToken).toBe("");
    const both = await fx.campaigns.listCampaignNodes({
      campaignId: id,
      states: [NodeState.WAITING, NodeState.VERIFYING],
    });
    expect(both.nodes).toHaveLength(12);
    const failed = await fx.campaigns.listCampaignNodes({
      campaignId: id,
      states: [NodeState.FAILED],
    });
    expect(failed.nodes).toEqual([]);
  });

  it("refuses a bad request with a specific error", async () => {
    const refused = async (p: Promise<unknown>) =>
      ConnectError.from(
        await p.then(
          () => new Error("answered"),
          (e: unknown) => e,
        ),
      );
    const unknown = await refused(fx.campaigns.listCampaignNodes({ campaignId: "nope" }));
    expect(unknown.code).toBe(Code.NotFound);
    expect(unknown.rawMessage).toContain('"nope"');
    const token = await refused(
      fx.campaigns.listCampaignNodes({ campaignId: id, pageToken: "garbage" }),
    );
    expect(token.code).toBe(Code.InvalidArgument);
    expect(token.rawMessage).toContain("page_token");
    const size = await refused(fx.campaigns.listCampaignNodes({ campaignId: id, pageSize: -1 }));
    expect(size.code).toBe(Code.InvalidArgument);
    const state = await refused(
      fx.campaigns.listCampaignNodes({ campaignId: id, states: [NodeState.UNSPECIFIED] }),
    );
    expect(state.code).toBe(Code.InvalidArgument);
    expect(state.rawMessage).toContain("node state");
  });
});
