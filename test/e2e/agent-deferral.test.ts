/**
 * Deferral with a real Agent and its update lock: installed at 1.0.0 with `--defer-lock FILE`,
 * it answers a campaign's offer DEFERRED while the file exists. With `--max-defer 8s` and the
 * lock held throughout, the node is offered again and ends skipped `deferred`, never failed,
 * and still runs 1.0.0. In a second campaign the lock is released after the first deferral: the
 * node is offered again and upgraded to 1.1.0.
 */
import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type CampaignFixture,
  isDone,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";
import { registerAgentRelease, waitOnline } from "./agent-campaign-fixture.js";
import { eventually, type RunningAgent } from "./agent-fixture.js";
import { type AgentWorld, startAgentWorld } from "./agent-world.js";

const NODE = "deferring-node";
const seconds = (s: number) => ({ seconds: BigInt(s), nanos: 0 });

describe("a real Agent that defers while its update lock is held", () => {
  let world: AgentWorld;
  let fx: CampaignFixture;
  let agent: RunningAgent | undefined;
  let lock = "";

  beforeAll(async () => {
    world = await startAgentWorld({ prefix: "agent-defer-", versions: ["1.0.0", "1.1.0"] });
    fx = world.fx;
    lock = join(world.dir, "update.lock");
    await registerAgentRelease(fx, "1.1.0", 11, world.bytes("1.1.0"));
    agent = await world.start({
      nodeId: NODE,
      startDeadlineMs: 8_000,
      flags: ["--defer-lock", lock],
    });
    await waitOnline(fx.tc, NODE, "1.0.0");
  }, 120_000);

  afterAll(async () => {
    await world?.stop();
  });

  it("is offered again while it defers, then ends skipped deferred past --max-defer, still on 1.0.0", async () => {
    await writeFile(lock, "backup running\n");
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec("1.1.0", [5, 100], { maxDefer: seconds(8), failureThresholdPercent: 0 }),
    });
    const id = started.campaign?.id ?? "";
    const began = Date.now();
    const deferred = await eventually(async () => {
      const n = (await fx.campaigns.getCampaign({ id })).nodes[0];
      return n?.deferredAt !== undefined && n.state === NodeState.WAITING ? n : undefined;
    }, "the node deferred");
    expect(deferred.message).toBe(`deferred: the update lock ${lock} is held`);
    const done = await waitForCampaign(fx.campaigns, id, isDone, 60_000);
    expect(Date.now() - began).toBeGreaterThanOrEqual(8_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    const node = (await fx.campaigns.getCampaign({ id })).nodes[0];
    expect(node).toMatchObject({ state: NodeState.SKIPPED, code: "deferred" });
    expect(node?.message).toMatch(/^deferred for 8 seconds or more \(the campaign's max defer\)/);
    // It was offered more than once: each offer answered DEFERRED by the Agent.
    expect(agent?.logs().match(/"phase":"DEFERRED"/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect((await waitOnline(fx.tc, NODE)).agentVersion).toBe("1.0.0");
  }, 90_000);

  it("takes the upgrade once the lock is released", async () => {
    await writeFile(lock, "");
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec("1.1.0", [5, 100], { maxDefer: seconds(60) }),
    });
    const id = started.campaign?.id ?? "";
    await eventually(async () => {
      const n = (await fx.campaigns.getCampaign({ id })).nodes[0];
      return n?.deferredAt !== undefined ? n : undefined;
    }, "the node deferred");
    await unlink(lock);
    const done = await waitForCampaign(fx.campaigns, id, isDone, 90_000);
    expect(CampaignPhase[done.phase]).toBe("COMPLETED");
    expect((await fx.campaigns.getCampaign({ id })).nodes[0]).toMatchObject({
      state: NodeState.SUCCEEDED,
    });
    await waitOnline(fx.tc, NODE, "1.1.0");
  }, 120_000);
});
