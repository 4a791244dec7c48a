/**
 * A revoked node stays out until an operator resets it (SPEC §10: `agentctl node reset ID`
 * is the only way a revoked node enrolls again): no join token brings it back, not one that
 * allows re-enrollment of any node, not one naming it, not the token and enrollment key of
 * its own enrollment (whose Welcome was lost). After a reset, any token that may enroll it
 * does, once.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { hello, openRawStream } from "../helpers/raw-agent.js";

/** Says Hello as `nodeId`; "welcomed" (the stream is then closed), or how it ended. */
async function attempt(
  tc: TestControl,
  token: string,
  nodeId: string,
  enrollmentKey = "",
): Promise<{ code: number | "welcomed"; details: string }> {
  const stream = openRawStream(tc.agentAddress, token);
  stream.send(hello(nodeId, { enrollmentKey }));
  const first = await stream.next(15_000).then(
    (m) => m.body.case,
    () => "ended",
  );
  stream.close();
  if (first === "welcome") {
    await stream.ended;
    return { code: "welcomed", details: "" };
  }
  return await stream.ended;
}

describe("a revoked node and join tokens that allow re-enrollment", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: { limits: { maxConcurrentHandshakes: 1024, handshakesPerCredential: 1024 } },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });
  const nodes = () => tc.client(NodeService);

  it("refuses it with a token allowing re-enrollment, and with one naming it, until a reset", async () => {
    const plain = await nodes().createJoinToken({ description: "fleet" });
    expect((await attempt(tc, plain.secret, "rv-1")).code).toBe("welcomed");
    await nodes().revokeNode({ nodeId: "rv-1", reason: "stolen" });

    const reenroll = await nodes().createJoinToken({ description: "any", allowReenroll: true });
    const named = await nodes().createJoinToken({ description: "named", nodeIds: ["rv-1"] });
    for (const token of [reenroll.secret, named.secret, plain.secret]) {
      const refused = await attempt(tc, token, "rv-1");
      expect(refused.code).toBe(status.PERMISSION_DENIED);
    }
    const { node } = await nodes().getNode({ nodeId: "rv-1" });
    expect(node?.revoked).toBe(true);

    await nodes().resetNode({ nodeId: "rv-1" });
    expect((await attempt(tc, reenroll.secret, "rv-1")).code).toBe("welcomed");
    const after = await nodes().getNode({ nodeId: "rv-1" });
    expect(after.node?.revoked).toBe(false);
    // The reset is used up: the next enrollment needs the token's grant again, as usual.
    expect((await attempt(tc, plain.secret, "rv-1")).code).toBe(status.PERMISSION_DENIED);
    expect((await attempt(tc, reenroll.secret, "rv-1")).code).toBe("welcomed");
  });

  it("refuses it with its own token and enrollment key (a lost Welcome's retry)", async () => {
    const token = await nodes().createJoinToken({ description: "fleet" });
    expect((await attempt(tc, token.secret, "rv-2", "key-of-rv-2-0123456789abcdef")).code).toBe(
      "welcomed",
    );
    // Before the revocation the retry of its enrollment is let in (its token was never used).
    expect((await attempt(tc, token.secret, "rv-2", "key-of-rv-2-0123456789abcdef")).code).toBe(
      "welcomed",
    );
    await nodes().revokeNode({ nodeId: "rv-2", reason: "stolen" });
    const refused = await attempt(tc, token.secret, "rv-2", "key-of-rv-2-0123456789abcdef");
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    expect((await nodes().getNode({ nodeId: "rv-2" })).node?.revoked).toBe(true);
  });

  it("still lets a token allowing re-enrollment re-enroll a node that is not revoked", async () => {
    const plain = await nodes().createJoinToken({ description: "fleet" });
    expect((await attempt(tc, plain.secret, "rv-3")).code).toBe("welcomed");
    const reenroll = await nodes().createJoinToken({ description: "any", allowReenroll: true });
    expect((await attempt(tc, reenroll.secret, "rv-3")).code).toBe("welcomed");
  });
});
