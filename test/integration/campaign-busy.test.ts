/**
 * A node is busy while it is itself in flight, not while some campaign it belongs to has not
 * finished: its row in an unfinished campaign is not final (waiting … verifying, rolling
 * back), or it is a node of the current batch of a campaign whose phase is still live
 * (running, paused, rolling_back), which may still roll that batch back.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeIdOf } from "../../agent-sim/index.js";
import {
  type Campaign,
  CampaignPhase,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { fleetOrderSecret, inReferenceOrder } from "../helpers/canary-order.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  nodesByState,
  quickSpec,
  refusal,
  waitForCampaign,
} from "./campaign-fixture.js";

function count(c: Campaign, state: NodeState): number {
  return c.counts.find((n) => n.state === state)?.count ?? 0;
}

/** Node ids `prefix-00001`… in the fleet's canary order (no canary labels). */
async function inCanaryOrder(fx: CampaignFixture, prefix: string, n: number): Promise<string[]> {
  const secret = await fleetOrderSecret(fx.tc.database.url);
  return inReferenceOrder(
    Array.from({ length: n }, (_, i) => nodeIdOf(prefix, i)),
    secret,
  );
}

describe("a node is busy while it is in flight, not while its campaign is unfinished", {
  timeout: 180_000,
}, () => {
  let fx: CampaignFixture;
  const HELD = "held-00001";
  let live: string[] = [];
  /** The first node of the second batch (ids 2..10 of 20 at 5 → 50 → 100 %): it fails. */
  let failing = "";

  beforeAll(async () => {
    fx = await campaignFixture({
      // Long enough that the held node is still restarting when the test ends.
      timeouts: {
        reconnectSeconds: 120,
        configGraceSeconds: 0,
        heartbeatSeconds: 2,
        offlineAfterSeconds: 10,
      },
    });
    live = await inCanaryOrder(fx, "live", 20);
    failing = live[1] ?? "";
    await fx.register(NEW);
    await fx.register(NEWER);
    // held-00001 is labelled canary=true, so it is the canary; it restarts and never returns.
    await fx.fleet({
      count: 20,
      idPrefix: "held",
      labels: { group: "held" },
      canaryCount: 1,
      behaviours: { [HELD]: { upgrade: "no-return" } },
    });
    await fx.fleet({
      count: 20,
      idPrefix: "live",
      labels: { group: "live" },
      behaviours: { [failing]: { upgrade: "fail" } },
    });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  it("frees the canceled nodes of an aborted campaign while one node still restarts", async () => {
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], { selector: { labels: { group: "held" } } }),
    });
    const id = started.campaign?.id ?? "";
    await waitForCampaign(fx.campaigns, id, (c) => count(c, NodeState.RESTARTING) === 1);
    await fx.campaigns.abortCampaign({ id });
    const aborted = await waitForCampaign(
      fx.campaigns,
      id,
      (c) => c.phase === CampaignPhase.ABORTED && count(c, NodeState.CANCELED) === 19,
    );
    expect(aborted.finishedAt).toBeUndefined();
    expect((await nodesByState(fx.campaigns, id)).get("restarting")).toEqual([HELD]);

    // The retry takes 15 of the 19 canceled nodes; a new campaign takes the other 4.
    const apart = ["held-00002", "held-00003", "held-00004", "held-00005"];
    const retried = await fx.campaigns.retryCampaign({ id, excludeNodeIds: apart });
    const retryId = retried.campaign?.id ?? "";
    expect(retried.campaign?.retryOf).toBe(id);
    expect(retried.campaign?.nodeCount).toBe(15);
    const fresh = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], { selector: { nodeIds: apart } }),
    });
    const freshId = fresh.campaign?.id ?? "";
    expect((await waitForCampaign(fx.campaigns, retryId)).phase).toBe(CampaignPhase.COMPLETED);
    expect((await waitForCampaign(fx.campaigns, freshId)).phase).toBe(CampaignPhase.COMPLETED);

    // The node still restarting stays busy in the aborted campaign, and only it.
    expect((await nodesByState(fx.campaigns, id)).get("restarting")).toEqual([HELD]);
    const conflict = await refusal(
      fx.campaigns.startCampaign({
        spec: quickSpec(NEWER, [5, 100], { selector: { labels: { group: "held" } } }),
      }),
    );
    expect(conflict.code).toBe(Code.FailedPrecondition);
    expect(conflict.rawMessage).toContain(HELD);
    expect(conflict.rawMessage).toContain(id);
    expect(conflict.rawMessage).toMatch(/^1 node\(s\)/);
    expect(conflict.rawMessage).not.toContain(retryId);
    expect(conflict.rawMessage).not.toContain(freshId);
  });

  it("frees the nodes of a passed batch of a running campaign, not those of its current batch", async () => {
    const long = { seconds: 3600n, nanos: 0 };
    const zero = { seconds: 0n, nanos: 0 };
    const started = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        selector: { labels: { group: "live" } },
        batches: [
          { percent: 5, minDuration: zero },
          { percent: 50, minDuration: long },
          { percent: 100, minDuration: zero },
        ],
        failureThresholdPercent: 50,
        disruptionBudgetPercent: 100,
      },
    });
    const id = started.campaign?.id ?? "";
    // The canary batch passed (its node succeeded and was confirmed); the second batch holds
    // for an hour with one node failed and eight verifying; the third waits.
    const running = await waitForCampaign(
      fx.campaigns,
      id,
      (c) =>
        count(c, NodeState.SUCCEEDED) === 1 &&
        count(c, NodeState.FAILED) === 1 &&
        count(c, NodeState.VERIFYING) === 8,
    );
    expect(running.phase).toBe(CampaignPhase.RUNNING);
    const [canary, , verifying] = live;
    const waiting = live[19] ?? "";

    const busy = async (nodeId: string) => {
      const conflict = await refusal(
        fx.campaigns.startCampaign({
          spec: quickSpec(NEWER, [5, 100], { selector: { nodeIds: [nodeId] } }),
        }),
      );
      expect(conflict.code).toBe(Code.FailedPrecondition);
      expect(conflict.rawMessage).toContain(nodeId);
      expect(conflict.rawMessage).toContain(id);
    };
    await busy(failing); // final, but its batch may still roll back
    await busy(verifying ?? "");
    await busy(waiting);

    const free = await fx.campaigns.startCampaign({
      spec: quickSpec(NEWER, [5, 100], { selector: { nodeIds: [canary ?? ""] } }),
    });
    const freeId = free.campaign?.id ?? "";
    expect((await waitForCampaign(fx.campaigns, freeId)).phase).toBe(CampaignPhase.COMPLETED);
    await fx.campaigns.abortCampaign({ id });
  });
});
