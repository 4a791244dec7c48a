import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  channelCredentials,
  NODE_A,
  NODE_CN,
  tlsConfig,
  tlsFile,
  tlsPath,
} from "../fixtures/tls/index.js";
import { agentctl } from "../helpers/agentctl.js";
import { credentialsOf } from "../helpers/attack-certs.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, hello, openRawStream } from "../helpers/raw-agent.js";

const heartbeat = { body: { case: "heartbeat" as const, value: {} } };

async function nodeRow(tc: TestControl, nodeId: string) {
  const result = await tc.control.db.pool.query<{
    id: string;
    online: boolean;
    token_hash: string | null;
    first_seen: Date | null;
  }>("select id, online, token_hash, first_seen from nodes where id = $1", [nodeId]);
  return result.rows[0];
}

describe("agent stream with mTLS required: the node id comes from the client certificate", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      adminCa: tlsFile("ca"),
      config: {
        tls: tlsConfig({ mtls: true, admin: true }),
        timeouts: { heartbeatSeconds: 0.2, offlineAfterSeconds: 1 },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("admits a node by its certificate's SAN URI without a token and keeps it online on heartbeats", async () => {
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      {},
      channelCredentials("node-a"),
    );
    expect(welcome.body.case).toBe("welcome");
    if (welcome.body.case !== "welcome") return;
    expect(welcome.body.value.nodeId).toBe(NODE_A);
    expect(welcome.body.value.nodeToken).toBe("");
    const timer = setInterval(() => stream.send(heartbeat), 100);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500)); // longer than offlineAfter
      expect(tc.control.hub.nodeIds()).toContain(NODE_A);
      const row = await nodeRow(tc, NODE_A);
      expect(row?.online).toBe(true);
      expect(row?.token_hash).toBeNull();
    } finally {
      clearInterval(timer);
      stream.close();
    }
    expect((await stream.ended).code).toBe(status.OK);
  });

  it("keeps the same node row when the certified node reconnects", async () => {
    const before = await nodeRow(tc, NODE_A);
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      { agentVersion: "1.2.0" },
      channelCredentials("node-a"),
    );
    expect(welcome.body.case).toBe("welcome");
    const after = await nodeRow(tc, NODE_A);
    expect(after?.first_seen).toEqual(before?.first_seen);
    const listed = await tc.client(NodeService).getNode({ nodeId: NODE_A });
    expect(listed.node?.agentVersion).toBe("1.2.0");
    stream.close();
    await stream.ended;
  });

  it("refuses a certificate that names its node by CN only: no CN fallback unless configured", async () => {
    const stream = openRawStream(tc.agentAddress, undefined, channelCredentials("node-cn"));
    stream.send(hello(NODE_CN));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
    expect(end.details).toBe(
      "client certificate names no node: it needs a SAN URI agentcontrol://node/<id>",
    );
    expect(await nodeRow(tc, NODE_CN)).toBeUndefined();
  });

  it("refuses with PERMISSION_DENIED a Hello naming another node than the certificate", async () => {
    const stream = openRawStream(tc.agentAddress, undefined, channelCredentials("node-a"));
    stream.send(hello("tls-node-b"));
    const end = await stream.ended;
    expect(end.code).toBe(status.PERMISSION_DENIED);
    expect(end.details).toMatch(/client certificate belongs to node "tls-node-a"/);
    expect(await nodeRow(tc, "tls-node-b")).toBeUndefined();
  });

  it("refuses a connection without a client certificate, even with a valid join token", async () => {
    const join = await tc.joinToken();
    const stream = openRawStream(tc.agentAddress, join, channelCredentials());
    stream.send(hello("no-cert-1"));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAVAILABLE);
    expect(await nodeRow(tc, "no-cert-1")).toBeUndefined();
  });

  it("refuses a client certificate from another CA that names a known node", async () => {
    const stream = openRawStream(tc.agentAddress, undefined, channelCredentials("rogue-a"));
    stream.send(hello(NODE_A));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAVAILABLE);
  });

  it("refuses a clear-text client on the TLS port", async () => {
    const stream = openRawStream(tc.agentAddress, undefined);
    stream.send(hello(NODE_A));
    expect((await stream.ended).code).toBe(status.UNAVAILABLE);
  });

  it("serves the admin API over HTTPS: Connect on HTTP/1.1 and gRPC on HTTP/2 (ALPN)", async () => {
    expect(tc.adminUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${tc.viewerToken}`);
      return next(req);
    };
    const nodeOptions = { ca: tlsFile("ca") };
    const overHttp1 = createClient(
      NodeService,
      createConnectTransport({
        baseUrl: tc.adminUrl,
        httpVersion: "1.1",
        nodeOptions,
        interceptors: [bearer],
      }),
    );
    const overGrpc = createClient(
      NodeService,
      createGrpcTransport({ baseUrl: tc.adminUrl, nodeOptions, interceptors: [bearer] }),
    );
    expect((await overHttp1.getNode({ nodeId: NODE_A })).node?.nodeId).toBe(NODE_A);
    expect((await overGrpc.getNode({ nodeId: NODE_A })).node?.nodeId).toBe(NODE_A);
  });
});

describe("agent stream over TLS with optional client certificates (a fleet moving to mTLS)", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: { tls: tlsConfig({ mtls: true, requireClientCert: false }) },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("enrolls a node without a client certificate by its join token, over TLS", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      join,
      "token-node-1",
      {},
      channelCredentials(),
    );
    expect(welcome.body.case === "welcome" && welcome.body.value.nodeToken).toMatch(/^ant\./);
    stream.close();
    await stream.ended;
  });

  it("admits a node by its certificate without a token", async () => {
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      undefined,
      NODE_A,
      {},
      channelCredentials("node-a"),
    );
    expect(welcome.body.case === "welcome" && welcome.body.value.nodeId).toBe(NODE_A);
    stream.close();
    await stream.ended;
  });

  it("never lets a certificate from another CA name a node", async () => {
    const stream = openRawStream(tc.agentAddress, undefined, channelCredentials("rogue-a"));
    stream.send(hello(NODE_A));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
    expect(end.details).toMatch(/missing credential/);
  });

  /** `agentctl tls issue-node ID --label …` with the test CA: the node's key and certificate. */
  const issueWithLabels = async (nodeId: string, labels: readonly string[]) => {
    const dir = await mkdtemp(join(tmpdir(), "tls-labels-"));
    try {
      await copyFile(tlsPath("ca"), join(dir, "ca.pem"));
      await copyFile(tlsPath("ca", "key"), join(dir, "ca.key"));
      const result = await agentctl([
        "tls",
        "issue-node",
        nodeId,
        "--out",
        dir,
        ...labels.flatMap((l) => ["--label", l]),
      ]);
      expect(result.code, result.stderr).toBe(0);
      return {
        key: await readFile(join(dir, `${nodeId}.key`)),
        cert: await readFile(join(dir, `${nodeId}.pem`)),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  it("trusts the labels tls issue-node --label put in the certificate, as a join token's, when the node enrolls", async () => {
    const nodeId = "labelled-by-cert";
    const client = await issueWithLabels(nodeId, ["pool=edge", "canary=true"]);
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      undefined,
      nodeId,
      { labels: { pool: "claimed-by-agent", rack: "9" } },
      credentialsOf(client),
    );
    expect(welcome.body.case).toBe("welcome");
    stream.close();
    const { node } = await tc.client(NodeService).getNode({ nodeId });
    expect(node?.assignedLabels).toEqual({ pool: "edge", canary: "true" });
    expect(node?.labels).toMatchObject({ pool: "edge", canary: "true" });
    expect(node?.pool).toBe("edge");
  });

  it("issues no certificate with a label that is not a valid label", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tls-labels-"));
    try {
      await copyFile(tlsPath("ca"), join(dir, "ca.pem"));
      await copyFile(tlsPath("ca", "key"), join(dir, "ca.key"));
      const refused = await agentctl([
        "tls",
        "issue-node",
        "x",
        "--out",
        dir,
        "--label",
        "Bad Key=1",
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/"Bad Key" is not a valid label key/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
