/**
 * A join token is not a key to every enrolled node: a client holding the fleet's join token
 * whose Hello names a node that already enrolled is refused, and the real node keeps its
 * node token. Re-enrolling an existing node takes an operator's explicit step (a reset, a
 * join token for named nodes, or one allowing re-enrollment), each audited.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, hello, openRawStream } from "../helpers/raw-agent.js";

describe("hostile: a join token holder naming an enrolled node", () => {
  let tc: TestControl;
  beforeAll(async () => {
    // Racing streams share one join token: the per-credential handshake cap would refuse
    // some of them before the enrollment rule this file tests is reached.
    tc = await startTestControl({ config: { limits: { handshakesPerCredential: 64 } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const nodes = () => tc.client(NodeService);
  /** Says Hello on a new stream; the status it ends with, or "welcomed" (closing it). */
  const refusal = async (
    token: string,
    nodeId: string,
    overrides: Parameters<typeof hello>[1] = {},
  ): Promise<{ code: number | "welcomed"; details: string }> => {
    const stream = openRawStream(tc.agentAddress, token);
    stream.send(hello(nodeId, overrides));
    const first = await stream.next(10_000).then(
      (m) => m.body.case,
      () => "ended",
    );
    if (first !== "ended") {
      stream.close();
      return { code: "welcomed", details: `first message: ${first}` };
    }
    return await stream.ended;
  };
  const tokenOf = (welcome: Awaited<ReturnType<typeof connectAgent>>["welcome"]) =>
    welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";

  it("is refused, and the real node's next stream is still welcomed with its node token", async () => {
    const join = await tc.joinToken();
    const real = await connectAgent(tc.agentAddress, join, "victim-1");
    const nodeToken = tokenOf(real.welcome);
    expect(nodeToken).toMatch(/^ant\./);
    real.stream.close();
    await real.stream.ended;

    const refused = await refusal(join, "victim-1");
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    expect(refused.details).toBe(
      'node "victim-1" is already enrolled; an operator must reset it (agentctl node reset victim-1) or, unless it was revoked, issue a join token that allows re-enrollment',
    );

    const again = await connectAgent(tc.agentAddress, nodeToken, "victim-1");
    expect(again.welcome.body.case).toBe("welcome");
    again.stream.close();
    await again.stream.ended;
  });

  it("leaves no trace of the refused attempt on the node and no re-enrollment in the audit log", async () => {
    const join = await tc.joinToken();
    const real = await connectAgent(tc.agentAddress, join, "victim-2", {
      agentVersion: "1.0.0",
    });
    real.stream.close();
    await real.stream.ended;
    const refused = await refusal(join, "victim-2", {
      agentVersion: "6.6.6",
      labels: { pool: "evil" },
    });
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    const { node } = await nodes().getNode({ nodeId: "victim-2" });
    expect(node?.agentVersion).toBe("1.0.0");
    expect(node?.pool).toBe("default");
    const audit = await tc.client(AuditService).listAuditEvents({ action: "node.reenroll" });
    expect(audit.events.filter((e) => e.nodeId === "victim-2")).toEqual([]);
  });

  it("lets only one of two join-token streams racing for a new node id enroll it", async () => {
    const join = await tc.joinToken();
    const racers = Array.from({ length: 6 }, () => openRawStream(tc.agentAddress, join));
    for (const racer of racers) racer.send(hello("contested-1"));
    const firsts = await Promise.all(
      racers.map((racer) =>
        racer.next(5000).then(
          (m) => m.body.case,
          () => "ended",
        ),
      ),
    );
    expect(firsts.filter((c) => c === "welcome")).toHaveLength(1);
    for (const racer of racers) racer.close();
    const ends = await Promise.all(racers.map((racer) => racer.ended));
    expect(ends.filter((e) => e.code === status.PERMISSION_DENIED)).toHaveLength(5);
  });
});
