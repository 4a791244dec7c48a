import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually, hello, openRawStream } from "../helpers/raw-agent.js";

describe("agent stream", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: {
        timeouts: { heartbeatSeconds: 0.1, offlineAfterSeconds: 0.6 },
        // Small, so an oversized message is sent well within the silence timeout.
        limits: { maxMessageBytes: 64 * 1024 },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const nodes = () => tc.client(NodeService);
  const onlineOf = async (nodeId: string) => (await nodes().getNode({ nodeId })).node?.online;

  it("enrolls a node with a join token and hands it a node token", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "enroll-1", {
      labels: { pool: "edge", zone: "a" },
    });
    expect(welcome.body.case).toBe("welcome");
    if (welcome.body.case !== "welcome") return;
    expect(welcome.body.value.nodeToken).toMatch(/^ant\./);
    expect(welcome.body.value.nodeId).toBe("enroll-1");
    const { node } = await nodes().getNode({ nodeId: "enroll-1" });
    expect(node?.pool).toBe("edge");
    expect(node?.online).toBe(true);
    stream.close();
  });

  it("filters the node list by labels, pool and online state", async () => {
    const byZone = await nodes().listNodes({ labels: { zone: "a" } });
    expect(byZone.nodes.map((n) => n.nodeId)).toEqual(["enroll-1"]);
    expect((await nodes().listNodes({ labels: { zone: "b" } })).totalSize).toBe(0);
    expect((await nodes().listNodes({ labels: { zone: "a", pool: "edge" } })).totalSize).toBe(1);
    expect((await nodes().listNodes({ pool: "edge" })).nodes.map((n) => n.nodeId)).toEqual([
      "enroll-1",
    ]);
    const offline = await nodes().listNodes({ online: false });
    expect(offline.nodes.every((n) => !n.online)).toBe(true);
  });

  it("keeps the same node row when the node reconnects with its node token", async () => {
    const join = await tc.joinToken();
    const first = await connectAgent(tc.agentAddress, join, "reconnect-1");
    const token = first.welcome.body.case === "welcome" ? first.welcome.body.value.nodeToken : "";
    const before = (await nodes().getNode({ nodeId: "reconnect-1" })).node;
    first.stream.close();
    await first.stream.ended;
    const second = await connectAgent(tc.agentAddress, token, "reconnect-1", {
      agentVersion: "1.1.0",
    });
    expect(second.welcome.body.case).toBe("welcome");
    if (second.welcome.body.case === "welcome")
      expect(second.welcome.body.value.nodeToken).toBe("");
    const after = (await nodes().getNode({ nodeId: "reconnect-1" })).node;
    expect(after?.firstSeen).toEqual(before?.firstSeen);
    expect(after?.agentVersion).toBe("1.1.0");
    const listed = await nodes().listNodes({});
    expect(listed.nodes.filter((n) => n.nodeId === "reconnect-1")).toHaveLength(1);
    second.stream.close();
  });

  it("refuses a stream without a credential", async () => {
    const stream = openRawStream(tc.agentAddress, undefined);
    stream.send(hello("nobody"));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
    expect(end.details).toMatch(/missing credential/);
  });

  it("refuses a revoked join token", async () => {
    const created = await nodes().createJoinToken({ description: "to revoke" });
    await nodes().revokeJoinToken({ id: created.token?.id ?? "" });
    const stream = openRawStream(tc.agentAddress, created.secret);
    stream.send(hello("revoked-1"));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
    expect(end.details).toMatch(/revoked/);
  });

  it("refuses an expired join token", async () => {
    const created = await nodes().createJoinToken({ ttl: { seconds: 0n, nanos: 1_000_000 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stream = openRawStream(tc.agentAddress, created.secret);
    stream.send(hello("expired-1"));
    const end = await stream.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
    expect(end.details).toMatch(/expired/);
  });

  it("refuses a wrong node token", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "wrong-token-1");
    stream.close();
    const token = welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";
    const forged = `${token.slice(0, -4)}AAAA`;
    const attempt = openRawStream(tc.agentAddress, forged);
    attempt.send(hello("wrong-token-1"));
    const end = await attempt.ended;
    expect(end.code).toBe(status.UNAUTHENTICATED);
  });

  it("refuses a Hello naming another node with PERMISSION_DENIED", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "honest-1");
    stream.close();
    const token = welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";
    const impostor = openRawStream(tc.agentAddress, token);
    impostor.send(hello("someone-else"));
    const end = await impostor.ended;
    expect(end.code).toBe(status.PERMISSION_DENIED);
    expect(end.details).toMatch(/honest-1/);
  });

  it("refuses a first message that is not Hello", async () => {
    const join = await tc.joinToken();
    const stream = openRawStream(tc.agentAddress, join);
    stream.send({ body: { case: "heartbeat", value: {} } });
    const end = await stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    expect(end.details).toMatch(/first message must be Hello/);
  });

  it("negotiates the intersection of capabilities", async () => {
    const join = await tc.joinToken();
    const { stream, welcome } = await connectAgent(tc.agentAddress, join, "caps-1", {
      capabilities: ["config.v1", "teleport.v9"],
    });
    expect(welcome.body.case === "welcome" && welcome.body.value.capabilities).toEqual([
      "config.v1",
    ]);
    expect((await nodes().getNode({ nodeId: "caps-1" })).node?.capabilities).toEqual(["config.v1"]);
    stream.close();
  });

  it("keeps a heartbeating node online and marks a silent one offline after the timeout", async () => {
    const join = await tc.joinToken();
    const beating = await connectAgent(tc.agentAddress, join, "beating-1");
    const silent = await connectAgent(tc.agentAddress, join, "silent-1");
    const timer = setInterval(
      () => beating.stream.send({ body: { case: "heartbeat", value: {} } }),
      100,
    );
    try {
      const end = await silent.stream.ended;
      expect(end.code).toBe(status.DEADLINE_EXCEEDED);
      await eventually(
        async () => (await onlineOf("silent-1")) === false,
        5000,
        "silent node offline",
      );
      expect(await onlineOf("beating-1")).toBe(true);
    } finally {
      clearInterval(timer);
      beating.stream.close();
    }
  });

  it("marks a node offline at once when its stream drops", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "dropper-1");
    expect(await onlineOf("dropper-1")).toBe(true);
    stream.channel.close();
    await eventually(async () => (await onlineOf("dropper-1")) === false, 2000, "offline");
  });

  it("ends only the stream that sent a malformed message, with a clear status", async () => {
    const join = await tc.joinToken();
    const good = await connectAgent(tc.agentAddress, join, "good-1");
    const bad = await connectAgent(tc.agentAddress, join, "bad-1");
    bad.stream.sendRaw(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    const end = await bad.stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    expect(end.details).toMatch(/malformed AgentMessage/);
    good.stream.send({ body: { case: "heartbeat", value: {} } });
    expect(await onlineOf("good-1")).toBe(true);
    good.stream.close();
  });

  it("ends a stream that sends an oversized message with RESOURCE_EXHAUSTED", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "big-1");
    stream.send({
      body: {
        case: "observed",
        value: { operationId: "op-1", phase: 1, message: "x".repeat(200 * 1024) },
      },
    });
    const end = await stream.ended;
    expect(end.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("ends a stream whose Hello is invalid, naming the field", async () => {
    const join = await tc.joinToken();
    const stream = openRawStream(tc.agentAddress, join);
    stream.send(hello("bad id with spaces", { agentVersion: "banana" }));
    const end = await stream.ended;
    expect(end.code).toBe(status.INVALID_ARGUMENT);
    expect(end.details).toMatch(/node_id/);
    expect(end.details).toMatch(/agent_version "banana"/);
  });
});
