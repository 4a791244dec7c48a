/**
 * An enrollment whose Welcome is lost (the stream ends after Control enrolled the node but
 * before the Agent read its node token) must not lock the Agent out: under a burst of
 * handshakes this happens to agents whose Welcome deadline passes. A retry with the same
 * join token and the same enrollment key completes the enrollment; anyone else holding the
 * join token is still refused, and the key is spent once the node token has been used.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, hello, openRawStream } from "../helpers/raw-agent.js";

const KEY = "k3y-of-the-agent-0123456789abcdef";

describe("enrollment: a Welcome lost after Control enrolled the node", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  /** Says Hello with the join token and ends the stream unread once the node exists. */
  const enrollAndLoseWelcome = async (join: string, nodeId: string, key: string) => {
    const stream = openRawStream(tc.agentAddress, join);
    stream.send(hello(nodeId, { enrollmentKey: key }));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = await tc
        .client(NodeService)
        .getNode({ nodeId })
        .then(
          () => true,
          () => false,
        );
      if (found) break;
      if (Date.now() > deadline) throw new Error(`${nodeId} was never enrolled`);
      await new Promise((r) => setTimeout(r, 50));
    }
    stream.close();
    await stream.ended;
  };

  /** Says Hello on a new stream; "welcomed" or the status it ended with. */
  const attempt = async (token: string, nodeId: string, key?: string) => {
    const stream = openRawStream(tc.agentAddress, token);
    stream.send(hello(nodeId, key === undefined ? {} : { enrollmentKey: key }));
    const first = await stream.next(10_000).then(
      (m) => m,
      () => undefined,
    );
    if (first?.body.case === "welcome") {
      stream.close();
      await stream.ended;
      return { code: "welcomed" as const, nodeToken: first.body.value.nodeToken };
    }
    const ended = await stream.ended;
    return { code: ended.code, nodeToken: "" };
  };

  it("welcomes the retry with the same join token and key, with a fresh node token, audited", async () => {
    const join = await tc.joinToken();
    await enrollAndLoseWelcome(join, "lost-1", KEY);
    const retry = await attempt(join, "lost-1", KEY);
    expect(retry.code).toBe("welcomed");
    expect(retry.nodeToken).toMatch(/^ant\./);
    const back = await connectAgent(tc.agentAddress, retry.nodeToken, "lost-1");
    expect(back.welcome.body.case).toBe("welcome");
    back.stream.close();
    await back.stream.ended;
    const audit = await tc.client(AuditService).listAuditEvents({ action: "node.reenroll" });
    const row = audit.events.find((e) => e.nodeId === "lost-1");
    expect(row?.message).toContain("the same enrollment key");
  });

  it("refuses the join token without the key, or with another key", async () => {
    const join = await tc.joinToken();
    await enrollAndLoseWelcome(join, "lost-2", KEY);
    expect((await attempt(join, "lost-2")).code).toBe(status.PERMISSION_DENIED);
    expect((await attempt(join, "lost-2", `${KEY}-other`)).code).toBe(status.PERMISSION_DENIED);
    expect((await attempt(join, "lost-2", KEY)).code).toBe("welcomed");
  });

  it("refuses the key with another join token", async () => {
    const join = await tc.joinToken();
    const other = await tc.joinToken();
    await enrollAndLoseWelcome(join, "lost-3", KEY);
    expect((await attempt(other, "lost-3", KEY)).code).toBe(status.PERMISSION_DENIED);
  });

  it("spends the key once the node token has been used", async () => {
    const join = await tc.joinToken();
    const first = await connectAgent(tc.agentAddress, join, "lost-4", { enrollmentKey: KEY });
    const nodeToken =
      first.welcome.body.case === "welcome" ? first.welcome.body.value.nodeToken : "";
    first.stream.close();
    await first.stream.ended;
    const claimed = await connectAgent(tc.agentAddress, nodeToken, "lost-4");
    claimed.stream.close();
    await claimed.stream.ended;
    expect((await attempt(join, "lost-4", KEY)).code).toBe(status.PERMISSION_DENIED);
  });

  it("refuses a key that is too short to be a secret, before any enrollment", async () => {
    const join = await tc.joinToken();
    const refused = await attempt(join, "lost-5", "short");
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    const found = await tc
      .client(NodeService)
      .getNode({ nodeId: "lost-5" })
      .then(
        () => true,
        () => false,
      );
    expect(found).toBe(false);
  });
});
