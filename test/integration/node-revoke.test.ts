/**
 * A compromised node can be cut off: `node revoke` invalidates its node token at once,
 * closes its live stream on whichever Control holds it (the cut-off notification), refuses
 * the client certificate it connected with, and leaves it outside until an operator lets it
 * enroll again. `node reset` closes the live stream too. With `enrollment.requireApproval`
 * a new node waits as pending, never offered, until approved.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { channelCredentials, NODE_A, tlsConfig, tlsFile } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { connectAgent, openRawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";

const tokenOf = (welcome: Awaited<ReturnType<typeof connectAgent>>["welcome"]) =>
  welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";

/** How a stream that should be refused ends (or "welcomed"). */
async function outcome(
  address: string,
  token: string | undefined,
  nodeId: string,
  credentials?: ReturnType<typeof channelCredentials>,
): Promise<{ code: number | "welcomed"; details: string }> {
  const stream = openRawStream(address, token, credentials);
  stream.send({
    body: {
      case: "hello",
      value: {
        nodeId,
        agentVersion: "1.0.0",
        platform: "linux-amd64",
        bootId: `boot-${Math.random().toString(36).slice(2)}`,
        capabilities: ["upgrade.v1"],
      },
    },
  });
  const first = await stream.next(10_000).then(
    (m) => m.body.case,
    () => "ended",
  );
  stream.close();
  if (first === "welcome") return { code: "welcomed", details: "" };
  return await stream.ended;
}

describe("node revoke across two Controls on one database", { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let a: TestControl;
  let b: TestControl;
  beforeAll(async () => {
    database = await createTestDatabase("node_revoke");
    a = await startTestControl({ database });
    b = await startTestControl({ database });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await database?.drop();
  });

  it("closes the stream held by the other Control, and the node token stops working", async () => {
    const join = await a.joinToken();
    const agent = await connectAgent(b.agentAddress, join, "revoked-1");
    const nodeToken = tokenOf(agent.welcome);
    expect(nodeToken).toMatch(/^ant\./);

    const revoked = await a
      .client(NodeService)
      .revokeNode({ nodeId: "revoked-1", reason: "stolen" });
    expect(revoked.node?.revoked).toBe(true);
    const ended = await agent.stream.ended;
    expect(ended.code).toBe(status.PERMISSION_DENIED);
    expect(ended.details).toMatch(/revoked/);

    const again = await outcome(a.agentAddress, nodeToken, "revoked-1");
    expect(again.code).toBe(status.UNAUTHENTICATED);
    // The join token it enrolled with does not let it back: it must be let in again.
    const rejoin = await outcome(a.agentAddress, join, "revoked-1");
    expect(rejoin.code).toBe(status.PERMISSION_DENIED);

    const audit = await a.client(AuditService).listAuditEvents({ action: "node.revoke" });
    expect(audit.events.map((e) => e.nodeId)).toEqual(["revoked-1"]);
    expect(audit.events[0]?.message).toMatch(/stolen/);

    await a.client(NodeService).resetNode({ nodeId: "revoked-1" });
    expect((await outcome(a.agentAddress, join, "revoked-1")).code).toBe("welcomed");
    const { node } = await a.client(NodeService).getNode({ nodeId: "revoked-1" });
    expect(node?.revoked).toBe(false);
  });

  it("closes the live stream of a node an operator resets", async () => {
    const join = await a.joinToken();
    const agent = await connectAgent(b.agentAddress, join, "reset-1");
    expect(agent.welcome.body.case).toBe("welcome");
    await a.client(NodeService).resetNode({ nodeId: "reset-1" });
    const ended = await agent.stream.ended;
    expect(ended.code).toBe(status.PERMISSION_DENIED);
    expect(ended.details).toMatch(/reset/);
  });
});

describe("node revoke of a certificate-authenticated node", { timeout: 120_000 }, () => {
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

  it("closes its stream and refuses its certificate afterwards", async () => {
    const agent = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      {},
      channelCredentials("node-a"),
    );
    expect(agent.welcome.body.case).toBe("welcome");
    const revoked = await tc.client(NodeService).revokeNode({ nodeId: NODE_A });
    expect(revoked.deniedFingerprints).toHaveLength(1);
    expect(revoked.deniedFingerprints[0]).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/);
    expect((await agent.stream.ended).code).toBe(status.PERMISSION_DENIED);
    const again = await outcome(tc.agentAddress, undefined, NODE_A, channelCredentials("node-a"));
    expect(again.code).toBe(status.UNAUTHENTICATED);
    expect(again.details).toMatch(/client certificate has been revoked/);
  });
});

describe("enrollment with approval required", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    tc = await startTestControl({
      config: {
        release: { pins: [key.pin] },
        policy: { minBatchDurationSeconds: 0 },
        enrollment: { requireApproval: true, agentReportedLabels: [] },
      },
    });
    await registerTestRelease(tc, { version: "2.0.0", sequence: 20, key });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("keeps a new node pending and out of every campaign until approved", async () => {
    const join = await tc.joinToken();
    for (const id of ["wait-1", "wait-2"]) {
      expect((await outcome(tc.agentAddress, join, id)).code).toBe("welcomed");
    }
    const nodes = tc.client(NodeService);
    const { nodes: listed } = await nodes.listNodes({});
    expect(listed.map((n) => [n.nodeId, n.pending])).toEqual([
      ["wait-1", true],
      ["wait-2", true],
    ]);
    const spec = {
      targetVersion: "2.0.0",
      batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 0n, nanos: 0 } })),
    };
    expect((await tc.client(CampaignService).planCampaign({ spec })).totalNodes).toBe(0);
    await expect(tc.client(CampaignService).startCampaign({ spec })).rejects.toThrow(/no node/);
    const approved = await nodes.approveNode({ nodeId: "wait-2" });
    expect(approved.node?.pending).toBe(false);
    const plan = await tc.client(CampaignService).planCampaign({ spec });
    expect(plan.batches.flatMap((b) => b.nodeIds)).toEqual(["wait-2"]);
    const audit = await tc.client(AuditService).listAuditEvents({ action: "node.approve" });
    expect(audit.events.map((e) => e.nodeId)).toEqual(["wait-2"]);
  });
});
