/**
 * Attack (one leaked join token fills every agent stream slot): under
 * `enrollment.requireApproval`, the holder of an ordinary join token enrolls invented node ids
 * from one host and keeps each stream open. Every one of them is `pending` (no campaign offers
 * it anything), yet together they held all `limits.maxStreams` slots, and an approved node
 * coming back with its own node token was refused "this Control holds as many agent streams as
 * it allows".
 *
 * Expected: nodes awaiting approval hold at most a tenth of the stream slots; beyond that a
 * pending node is refused RESOURCE_EXHAUSTED (before anything is written for a join-token
 * enrollment), and an approved node still finds a slot.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, type RawStream } from "../helpers/raw-agent.js";

const MAX_STREAMS = 30;
const OWN_CHANNEL = { channelOptions: { "grpc.use_local_subchannel_pool": 1 } };

describe("streams of nodes awaiting approval", { timeout: 120_000 }, () => {
  let tc: TestControl;
  const held: RawStream[] = [];
  beforeAll(async () => {
    tc = await startTestControl({
      config: { limits: { maxStreams: MAX_STREAMS }, enrollment: { requireApproval: true } },
    });
  });
  afterAll(async () => {
    for (const s of held) s.close();
    await tc?.stop();
  });

  it("hold a tenth of the slots, and an approved node reconnecting is still welcomed", async () => {
    const genuine = await connectAgent(tc.agentAddress, await tc.joinToken(), "genuine-1");
    expect(genuine.welcome.body.case).toBe("welcome");
    const nodeToken =
      genuine.welcome.body.case === "welcome" ? genuine.welcome.body.value.nodeToken : "";
    genuine.stream.close();
    await genuine.stream.ended;
    await tc.client(NodeService).approveNode({ nodeId: "genuine-1" });

    const leaked = await tc.joinToken();
    let welcomed = 0;
    const refusals: string[] = [];
    for (let i = 0; i < MAX_STREAMS + 5; i++) {
      try {
        const { stream, welcome } = await connectAgent(
          tc.agentAddress,
          leaked,
          `fake-${i}`,
          {},
          OWN_CHANNEL,
        );
        if (welcome.body.case === "welcome") welcomed += 1;
        held.push(stream);
      } catch (error) {
        refusals.push(String((error as Error).message));
      }
    }
    expect(welcomed).toBe(MAX_STREAMS / 10);
    expect(refusals[0]).toContain(`stream ended: ${status.RESOURCE_EXHAUSTED} `);
    expect(refusals[0]).toContain("awaiting approval");

    const back = await connectAgent(tc.agentAddress, nodeToken, "genuine-1", {}, OWN_CHANNEL).then(
      ({ stream, welcome }) => {
        held.push(stream);
        return welcome.body.case;
      },
      (error: Error) => error.message,
    );
    expect(back).toBe("welcome");

    // Nothing was written for the refused enrollments: only the admitted fakes are listed.
    const { nodes } = await tc.client(NodeService).listNodes({});
    expect(nodes.filter((n) => n.nodeId.startsWith("fake-")).length).toBe(MAX_STREAMS / 10);
  });
});
