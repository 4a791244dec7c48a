/**
 * StartCampaign, PlanCampaign and RetryCampaign and a release the agents would refuse: one
 * expired by Control's clock is refused; a node that confirmed a higher sequence than the
 * release's (agents never move their confirmed sequence back) is skipped `ahead_of_target`,
 * so a campaign whose every node is ahead has nothing to upgrade.
 */
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { type Clock, systemClock } from "../../control/clock.js";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import {
  type Campaign,
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { makeKeys, makeRelease, registerTestRelease } from "../helpers/releases.js";
import { fastConfig, NEW, NEWER, quickSpec, refusal, waitForCampaign } from "./campaign-fixture.js";

const HOUR = 3600_000;
/** Registered with an expiry one hour after the test starts. */
const SHORT_LIVED = "4.0.0";

function count(c: Campaign, state: NodeState): number {
  return c.counts.find((n) => n.state === state)?.count ?? 0;
}

describe("starting a campaign with a release the agents would refuse", { timeout: 180_000 }, () => {
  let tc: TestControl;
  let key: ReleaseKeyPair;
  /** How far Control's clock runs ahead of the wall clock. */
  let aheadMs = 0;
  const clock: Clock = { now: () => new Date(Date.now() + aheadMs), sleep: systemClock.sleep };
  const fleets: Fleet[] = [];
  let confirmed: Fleet;
  let fresh: Fleet;

  const campaigns = () => tc.client(CampaignService);
  const group = (name: string) => ({ labels: { group: name } });
  const fleet = async (idPrefix: string, count: number) => {
    const f = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      pins: [key.pin],
      restartMs: [20, 120],
      count,
      idPrefix,
      labels: { group: idPrefix },
    });
    fleets.push(f);
    await f.waitUntil((x) => x.welcomedCount() === count, 60_000, `${idPrefix} welcomed`);
    return f;
  };

  beforeAll(async () => {
    [key] = (await makeKeys(1)) as [ReleaseKeyPair];
    tc = await startTestControl({ clock, config: fastConfig(key.pin) });
    await registerTestRelease(tc, { version: NEW, sequence: 20, key });
    await registerTestRelease(tc, { version: NEWER, sequence: 30, key });
    const shortLived = await makeRelease({
      version: SHORT_LIVED,
      sequence: 40,
      keys: [key],
      platforms: ["linux-amd64"],
      expires: new Date(Date.now() + HOUR),
    });
    await tc.client(ReleaseService).registerRelease({
      envelope: shortLived.envelope,
      artifacts: [...shortLived.files].map(([platform, content]) => ({ platform, content })),
    });
    confirmed = await fleet("conf", 12);
    fresh = await fleet("fresh", 4);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    await tc?.stop();
  });

  it("skips the nodes that confirmed a higher sequence (ahead_of_target) at start, plan and retry, and only those nodes", async () => {
    // A campaign to 2.0.0 stopped after its canary: 11 nodes end canceled.
    const long = { seconds: 3600n, nanos: 0 };
    const first = await campaigns().startCampaign({
      spec: {
        targetVersion: NEW,
        selector: group("conf"),
        batches: [
          { percent: 5, minDuration: long },
          { percent: 100, minDuration: long },
        ],
      },
    });
    const firstId = first.campaign?.id ?? "";
    await waitForCampaign(
      campaigns(),
      firstId,
      (c) => count(c, NodeState.VERIFYING) + count(c, NodeState.SUCCEEDED) === 1,
    );
    await campaigns().abortCampaign({ id: firstId });
    const aborted = await waitForCampaign(campaigns(), firstId);
    expect(count(aborted, NodeState.CANCELED)).toBe(11);

    // Then the whole group goes to 3.0.0 and confirms sequence 30, reported in its Hellos.
    const upgraded = await campaigns().startCampaign({
      spec: quickSpec(NEWER, [5, 100], { selector: group("conf"), disruptionBudgetPercent: 100 }),
    });
    const upgradedId = upgraded.campaign?.id ?? "";
    expect((await waitForCampaign(campaigns(), upgradedId)).phase).toBe(CampaignPhase.COMPLETED);
    await confirmed.waitUntil(
      (f) => f.agents.every((a) => a.confirmedSequence === 30n),
      30_000,
      "sequence 30 confirmed",
    );
    for (const agent of confirmed.agents) agent.goOffline();
    await confirmed.waitUntil((f) => f.welcomedCount() === 0, 30_000, "all offline");
    for (const agent of confirmed.agents) agent.goOnline();
    await confirmed.waitUntil((f) => f.welcomedCount() === 12, 30_000, "all back");
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { nodes } = await tc.client(NodeService).listNodes({ labels: { group: "conf" } });
      if (nodes.length === 12 && nodes.every((n) => n.confirmedSequence === 30n)) break;
      if (Date.now() > deadline) throw new Error("confirmed sequence 30 not recorded");
      await new Promise((r) => setTimeout(r, 50));
    }

    const expectNothing = (error: ConnectError, nodes: number) => {
      expect(error.code).toBe(Code.FailedPrecondition);
      expect(error.rawMessage).toBe(
        `no node can be upgraded: all ${nodes} selected node(s) are already on 2.0.0, lack upgrade.v1, run a platform the release has no artifact for or confirmed a higher sequence`,
      );
    };
    const spec = quickSpec(NEW, [5, 100], { selector: group("conf") });
    const plan = await campaigns().planCampaign({ spec });
    expect(plan.totalNodes).toBe(12);
    expect(plan.skipped.map((k) => [k.code, k.nodeIds.length, k.message])).toEqual([
      [
        "ahead_of_target",
        12,
        "the agent confirmed a sequence above 20 (release 2.0.0): it refuses anything below",
      ],
    ]);
    expectNothing(await refusal(campaigns().startCampaign({ spec })), 12);
    expectNothing(await refusal(campaigns().retryCampaign({ id: firstId })), 11);
    const listed = await campaigns().listCampaigns({});
    expect(listed.campaigns.map((c) => c.id).sort()).toEqual([firstId, upgradedId].sort());

    // Nodes that confirmed nothing above 20 still take 2.0.0, whatever the rest of the fleet confirmed.
    const other = await campaigns().startCampaign({
      spec: quickSpec(NEW, [5, 100], { selector: group("fresh"), disruptionBudgetPercent: 100 }),
    });
    const otherId = other.campaign?.id ?? "";
    expect((await waitForCampaign(campaigns(), otherId)).phase).toBe(CampaignPhase.COMPLETED);
    for (const agent of fresh.agents) expect(agent.version).toBe(NEW);
  });

  it("refuses a release expired by Control's clock, at start, plan and retry", async () => {
    const started = await campaigns().startCampaign({
      spec: {
        targetVersion: SHORT_LIVED,
        selector: group("fresh"),
        batches: [
          { percent: 5, minDuration: { seconds: 3600n, nanos: 0 } },
          { percent: 100, minDuration: { seconds: 0n, nanos: 0 } },
        ],
      },
    });
    const id = started.campaign?.id ?? "";
    await campaigns().abortCampaign({ id });
    const aborted = await waitForCampaign(campaigns(), id);
    expect(count(aborted, NodeState.CANCELED)).toBeGreaterThanOrEqual(3);

    aheadMs = 2 * HOUR;
    const spec = quickSpec(SHORT_LIVED, [5, 100], { selector: group("fresh") });
    for (const call of [
      () => campaigns().startCampaign({ spec }),
      () => campaigns().planCampaign({ spec }),
      () => campaigns().retryCampaign({ id }),
    ]) {
      const error = await refusal(call());
      expect(error.code).toBe(Code.FailedPrecondition);
      expect(error.rawMessage).toMatch(
        /^release 4\.0\.0 expired at \d{4}-\d\d-\d\dT[\d:.]+Z; register a newer one/,
      );
    }
    expect((await campaigns().listCampaigns({})).campaigns).toHaveLength(4);
  });
});
