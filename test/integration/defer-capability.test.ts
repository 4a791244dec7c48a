/**
 * Deferral is negotiated (`defer.v1`, SPEC §10): Control welcomes `defer.v1`, and honours a
 * DEFERRED answer only on a stream whose session negotiated it. A DEFERRED from a session
 * without it is a refusal (`defer_unsupported`): the node fails `rejected`, its message naming
 * the capability, instead of waiting forever as deferred. Real Control, real PostgreSQL, raw
 * agents on the real gRPC server on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { OperationPhase } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { connectAgent, eventually, type RawStream } from "../helpers/raw-agent.js";
import { type CampaignFixture, campaignFixture, NEW, quickSpec } from "./campaign-fixture.js";

describe("the defer.v1 capability", { timeout: 60_000 }, () => {
  let f: CampaignFixture;
  const streams: RawStream[] = [];

  beforeAll(async () => {
    f = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    await f.register(NEW);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await f?.stop();
  });

  /** Connects `nodeId` offering `capabilities`, starts a campaign over it, answers DEFERRED. */
  const deferOnce = async (nodeId: string, capabilities: string[]) => {
    const { stream, welcome } = await connectAgent(
      f.tc.agentAddress,
      await f.tc.joinToken(),
      nodeId,
      {
        capabilities,
        labels: { group: nodeId },
      },
    );
    streams.push(stream);
    expect(welcome.body.case).toBe("welcome");
    const negotiated = welcome.body.case === "welcome" ? welcome.body.value.capabilities : [];
    const { campaign } = await f.campaigns.startCampaign({
      spec: quickSpec(NEW, [100], { selector: { labels: { group: nodeId } } }),
    });
    const id = campaign?.id ?? "";
    let operationId = "";
    for (;;) {
      const message = await stream.next(20_000);
      if (message.body.case === "operation") {
        operationId = message.body.value.id;
        break;
      }
    }
    stream.send({
      body: {
        case: "observed",
        value: {
          operationId,
          phase: OperationPhase.DEFERRED,
          version: NEW,
          code: "deferred",
          message: "an update lock is held",
        },
      },
    });
    return { id, negotiated };
  };

  const nodeOf = async (id: string) => (await f.campaigns.getCampaign({ id })).nodes[0];

  it("welcomes defer.v1 and honours DEFERRED from a session that negotiated it", async () => {
    const { id, negotiated } = await deferOnce("defer-yes", ["upgrade.v1", "defer.v1"]);
    expect(negotiated).toContain("defer.v1");
    await eventually(
      async () => (await nodeOf(id))?.deferredAt !== undefined,
      20_000,
      "the node deferred",
    );
    const node = await nodeOf(id);
    expect(node?.state).toBe(NodeState.WAITING);
    expect(node?.message).toBe("deferred: an update lock is held");
  });

  it("treats DEFERRED from a session without defer.v1 as a refusal: failed rejected, defer_unsupported", async () => {
    const { id, negotiated } = await deferOnce("defer-no", ["upgrade.v1"]);
    expect(negotiated).not.toContain("defer.v1");
    await eventually(
      async () => (await nodeOf(id))?.state === NodeState.FAILED,
      20_000,
      "the node failed",
    );
    const node = await nodeOf(id);
    expect(node?.code).toBe("rejected");
    expect(node?.message).toContain("defer_unsupported");
    expect(node?.message).toContain("defer.v1");
    expect(node?.deferredAt).toBeUndefined();
  });
});
