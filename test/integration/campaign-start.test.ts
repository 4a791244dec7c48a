import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { DesiredVersionService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { ErrorInfoSchema } from "../../proto/gen/google/rpc/error_details_pb.js";
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

describe("starting, planning, listing and retrying campaigns", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let busy: Fleet;
  let offline: Fleet;
  beforeAll(async () => {
    fx = await campaignFixture({ agent: { maxVersion: "2.5.0" } });
    await fx.register(NEW);
    await fx.register(NEWER);
    busy = await fx.fleet({ count: 20, idPrefix: "busy", labels: { group: "busy" } });
    offline = await fx.fleet({
      count: 20,
      idPrefix: "off",
      labels: { group: "off" },
      behaviours: { "off-00002": { upgrade: "no-upgrade-cap" } },
    });
  }, 180_000);
  afterAll(async () => {
    await fx?.stop();
  });

  const group = (name: string) => ({ labels: { group: name } });

  it("plans without side effects, in canary order, with unsupported nodes listed", async () => {
    const plan = await fx.campaigns.planCampaign({
      spec: quickSpec(NEW, [5, 50, 100], { selector: group("off") }),
    });
    expect(plan.totalNodes).toBe(20);
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([1, 9, 10]);
    expect(plan.unsupportedNodeIds).toEqual(["off-00002"]);
    expect((await fx.campaigns.listCampaigns({})).campaigns).toEqual([]);
  });

  it("refuses invalid specs, unknown releases, releases above agent.maxVersion, and empty plans", async () => {
    const invalid = await refusal(
      fx.campaigns.startCampaign({
        spec: quickSpec(NEW, [50, 40], { failureThresholdPercent: 101 }),
      }),
    );
    expect(invalid.code).toBe(Code.InvalidArgument);
    expect(invalid.message).toMatch(/strictly increase/);
    expect(invalid.message).toMatch(/at most 5 %/);
    expect(invalid.message).toMatch(/must be 100 %/);
    expect(invalid.message).toMatch(/failure_threshold_percent/);
    const unknown = await refusal(
      fx.campaigns.startCampaign({ spec: quickSpec("9.9.9", [5, 100]) }),
    );
    expect(unknown.code).toBe(Code.NotFound);
    expect(unknown.message).toMatch(/9\.9\.9 is not registered/);
    const tooNew = await refusal(fx.campaigns.startCampaign({ spec: quickSpec(NEWER, [5, 100]) }));
    expect(tooNew.code).toBe(Code.InvalidArgument);
    expect(tooNew.message).toMatch(/agent\.maxVersion/);
    const none = await refusal(
      fx.campaigns.startCampaign({ spec: quickSpec(NEW, [5, 100], { selector: group("nobody") }) }),
    );
    expect(none.code).toBe(Code.FailedPrecondition);
    expect(none.message).toMatch(/no node can be upgraded/);
    expect((await fx.campaigns.listCampaigns({})).campaigns).toEqual([]);
  });

  it("refuses a start that includes a node of an active campaign, naming the busy nodes", async () => {
    const first = busy.agents.slice(0, 5).map((a) => a.nodeId);
    const long = { seconds: 3600n, nanos: 0 };
    const a = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        selector: { nodeIds: first },
        batches: [
          { percent: 5, minDuration: long },
          { percent: 100, minDuration: long },
        ],
      },
    });
    const id = a.campaign?.id ?? "";
    const conflict = await refusal(
      fx.campaigns.startCampaign({ spec: quickSpec(NEW, [5, 100], { selector: group("busy") }) }),
    );
    expect(conflict.code).toBe(Code.FailedPrecondition);
    for (const nodeId of first) expect(conflict.message).toContain(nodeId);
    expect(conflict.message).toContain(id);
    const [info] = conflict.findDetails(ErrorInfoSchema);
    expect(info?.reason).toBe("NODE_BUSY");
    expect(info?.domain).toBe("agentcontrol");
    expect(info?.metadata.campaignIds).toBe(id);
    expect(info?.metadata.nodeIds?.split(",").sort()).toEqual([...first].sort());
    expect(info?.metadata.nodeCount).toBe(String(first.length));
    const listed = await fx.campaigns.listCampaigns({ nodeId: first[0] ?? "" });
    expect(listed.campaigns.map((c) => c.id)).toEqual([id]);
    const running = await fx.campaigns.listCampaigns({ phases: [CampaignPhase.RUNNING] });
    expect(running.campaigns.map((c) => c.id)).toEqual([id]);
    await fx.campaigns.abortCampaign({ id });
    await waitForCampaign(fx.campaigns, id);
  });

  it("serialises concurrent starts over the same nodes: one wins, the other names the busy nodes", async () => {
    const spec = quickSpec(NEW, [5, 100], {
      selector: { nodeIds: busy.agents.slice(5, 10).map((a) => a.nodeId) },
    });
    const results = await Promise.allSettled([
      fx.campaigns.startCampaign({ spec }),
      fx.campaigns.startCampaign({ spec }),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const failed = results.filter((r) => r.status === "rejected");
    expect(ok).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect((failed[0] as PromiseRejectedResult).reason.code).toBe(Code.FailedPrecondition);
    const id = (ok[0] as PromiseFulfilledResult<{ campaign?: { id: string } }>).value.campaign?.id;
    const updates: CampaignPhase[] = [];
    for await (const update of fx.campaigns.watchCampaign({ id: id ?? "" })) {
      updates.push(update.campaign?.phase ?? CampaignPhase.UNSPECIFIED);
    }
    expect(updates.at(-1)).toBe(CampaignPhase.COMPLETED);
  });

  it("skips offline and unsupported nodes, reports them, and retries the rest", async () => {
    const gone = ["off-00005", "off-00009", "off-00013"];
    for (const nodeId of gone) offline.agent(nodeId).goOffline();
    await offline.waitUntil((f) => f.welcomedCount() === 17, 10_000, "three agents offline");
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], { selector: group("off"), disruptionBudgetPercent: 100 }),
    });
    const id = started.campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const skipped = nodes.filter((n) => n.state === NodeState.SKIPPED);
    expect(skipped.map((n) => n.nodeId).sort()).toEqual([...gone, "off-00002"].sort());
    for (const n of skipped) {
      expect(n.code).toBe(n.nodeId === "off-00002" ? "upgrade_unsupported" : "node_offline");
    }
    expect(done.batches.reduce((sum, b) => sum + b.offerable, 0)).toBe(16);

    // The completed campaign became its nodes' desired version: without clearing it,
    // convergence would take the returning nodes before the retry does.
    const desired = fx.tc.client(DesiredVersionService);
    for (const d of (await desired.listDesiredVersions({})).desiredVersions)
      await desired.clearDesiredVersion({ id: d.id });
    for (const nodeId of gone) offline.agent(nodeId).goOnline();
    await offline.waitUntil((f) => f.welcomedCount() === 20, 10_000, "all back online");
    const retried = await fx.campaigns.retryCampaign({ id, excludeNodeIds: ["off-00002"] });
    const retryId = retried.campaign?.id ?? "";
    expect(retried.campaign?.retryOf).toBe(id);
    expect(retried.campaign?.nodeCount).toBe(3);
    const again = await waitForCampaign(fx.campaigns, retryId);
    expect(again.phase).toBe(CampaignPhase.COMPLETED);
    expect((await nodesByState(fx.campaigns, retryId)).get("succeeded")?.sort()).toEqual(gone);
    for (const nodeId of gone) expect(offline.agent(nodeId).version).toBe(NEW);
    const listed = await fx.campaigns.listCampaigns({ pageSize: 1 });
    expect(listed.campaigns.map((c) => c.id)).toEqual([retryId]);
    const next = await fx.campaigns.listCampaigns({ pageSize: 1, pageToken: listed.nextPageToken });
    expect(next.campaigns.map((c) => c.id)).toEqual([id]);
    const refused = await refusal(fx.campaigns.retryCampaign({ id: retryId }));
    expect(refused.code).toBe(Code.FailedPrecondition);
  });
});
