/**
 * Attack: with `enrollment.requireApproval`, a new node must wait as `pending` until an
 * administrator runs `agentctl node approve`. A node authenticated by a client certificate
 * is enrolled by its first Hello (the client CA is the enrollment authority) in a statement
 * that never sets `pending`, so any certificate the CA signed (a shared CA, a stolen
 * certificate for a node not yet installed) joins the fleet approved and is offered
 * campaigns at once: the approval step is bypassed by choosing mTLS over a join token.
 *
 * Expected refusal: with `requireApproval`, a node first enrolled by its certificate is
 * pending, exactly as one enrolled by a join token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { channelCredentials, NODE_A, tlsConfig, tlsFile } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

describe("certificate enrollment with approval required", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: {
        tls: tlsConfig({ mtls: true, admin: true }),
        enrollment: { requireApproval: true, agentReportedLabels: [] },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("leaves a node first seen by its certificate pending until approved", async () => {
    const agent = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      {},
      channelCredentials("node-a"),
    );
    expect(agent.welcome.body.case).toBe("welcome");
    agent.stream.close();
    const { node } = await tc.client(NodeService).getNode({ nodeId: NODE_A });
    expect(node?.pending).toBe(true);
  });
});
