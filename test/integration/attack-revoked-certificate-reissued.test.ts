/**
 * Attack: a compromised node is revoked (`agentctl node revoke`), but it holds a second
 * client certificate naming it (a renewal: `agentctl tls issue-node ID` run again, or one
 * it never presented). The denylist holds only the fingerprint the node last connected
 * with, and a certificate Hello writes `revoked_at = null`, so the other certificate walks
 * straight back in, un-revokes the node without an audit row, and is offered campaigns again.
 *
 * Expected refusal (docs/operator-guide.md: a revoked node "comes back only by enrolling
 * again after `node reset ID` or with a token created with `--node ID`"): every stream for a
 * revoked node is refused, whatever certificate names it, and the node stays revoked. After
 * an operator's `node reset` it comes back by certificate, and that return is audited
 * (`node.reenroll`) like a join-token re-enrollment.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { channelCredentials, NODE_A, tlsConfig, tlsFile } from "../fixtures/tls/index.js";
import { credentialsOf, issueNodeCertificate } from "../helpers/attack-certs.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, hello, openRawStream } from "../helpers/raw-agent.js";

describe("a revoked certificate node with a second certificate", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: { tls: tlsConfig({ mtls: true, admin: true }) },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("is refused, and the node stays revoked", async () => {
    const renewed = issueNodeCertificate(NODE_A);
    const first = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      {},
      channelCredentials("node-a"),
    );
    expect(first.welcome.body.case).toBe("welcome");
    await tc.client(NodeService).revokeNode({ nodeId: NODE_A, reason: "host compromised" });
    expect((await first.stream.ended).code).toBe(status.PERMISSION_DENIED);

    const stream = openRawStream(tc.agentAddress, undefined, credentialsOf(renewed));
    stream.send(hello(NODE_A));
    const answer = await stream.next(10_000).then(
      (m) => m.body.case,
      () => "ended",
    );
    stream.close();
    expect(answer).not.toBe("welcome");
    const ended = await stream.ended;
    expect([status.UNAUTHENTICATED, status.PERMISSION_DENIED]).toContain(ended.code);
    const { node } = await tc.client(NodeService).getNode({ nodeId: NODE_A });
    expect(node?.revoked).toBe(true);
  });

  it("comes back by certificate after node reset, and the return is audited once", async () => {
    const audits = async () =>
      (await tc.client(AuditService).listAuditEvents({ action: "node.reenroll" })).events.filter(
        (e) => e.nodeId === NODE_A,
      );
    expect(await audits()).toHaveLength(0);
    await tc.client(NodeService).resetNode({ nodeId: NODE_A, reason: "host rebuilt" });
    const renewed = issueNodeCertificate(NODE_A);
    for (let i = 0; i < 2; i++) {
      const stream = openRawStream(tc.agentAddress, undefined, credentialsOf(renewed));
      stream.send(hello(NODE_A));
      expect((await stream.next(10_000)).body.case).toBe("welcome");
      stream.close();
      await stream.ended.catch(() => undefined);
    }
    const { node } = await tc.client(NodeService).getNode({ nodeId: NODE_A });
    expect(node?.revoked).toBe(false);
    const events = await audits();
    expect(events).toHaveLength(1);
    expect(events[0]?.message).toContain("client certificate");
  });
});
