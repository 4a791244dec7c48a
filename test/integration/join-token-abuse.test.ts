/**
 * A leaked join token cannot be turned against the fleet: it enrolls at most its
 * `--max-uses` nodes however many race for it, a revocation or expiry that lands while a
 * handshake is under way stops that enrollment, and the nodes it enrolls cannot make
 * themselves canaries or choose their pool by what they claim in Hello.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../control/manual-clock.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { fleetOrderSecret, inReferenceOrder } from "../helpers/canary-order.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { hello, openRawStream } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";

const T0 = Date.parse("2026-03-01T10:00:00Z");

/** Says Hello as `nodeId`; "welcomed" (the stream is then closed), or how it ended. */
async function attempt(
  tc: TestControl,
  token: string,
  nodeId: string,
  labels: Record<string, string> = {},
): Promise<{ code: number | "welcomed"; details: string }> {
  const stream = openRawStream(tc.agentAddress, token);
  stream.send(hello(nodeId, { labels }));
  const first = await stream.next(15_000).then(
    (m) => m.body.case,
    () => "ended",
  );
  if (first === "welcome") {
    stream.close();
    await stream.ended;
    return { code: "welcomed", details: "" };
  }
  stream.close();
  return await stream.ended;
}

describe("join tokens that cannot be abused", { timeout: 120_000 }, () => {
  let tc: TestControl;
  const clock = new ManualClock(T0);
  let pin = "";
  beforeAll(async () => {
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    pin = key.pin;
    tc = await startTestControl({
      clock,
      config: {
        release: { pins: [pin] },
        policy: { minBatchDurationSeconds: 0 },
        limits: { maxConcurrentHandshakes: 4096, handshakesPerCredential: 4096 },
        enrollment: { agentReportedLabels: [] },
      },
    });
    await registerTestRelease(tc, { version: "2.0.0", sequence: 20, key });
  });
  afterAll(async () => {
    await tc?.stop();
  });
  const nodes = () => tc.client(NodeService);

  it("enrolls exactly N of N+k concurrent enrollments with --max-uses N", async () => {
    const created = await nodes().createJoinToken({ description: "leak", maxUses: 5 });
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => attempt(tc, created.secret, `burst-${i}`)),
    );
    expect(results.filter((r) => r.code === "welcomed")).toHaveLength(5);
    const refused = results.filter((r) => r.code !== "welcomed");
    expect(refused).toHaveLength(20);
    for (const r of refused) {
      expect(r.code).toBe(status.UNAUTHENTICATED);
      expect(r.details).toMatch(/join token has been used up \(5 of 5 enrollments\)/);
    }
    const { nodes: enrolled } = await nodes().listNodes({ pageSize: 1000 });
    expect(enrolled.filter((n) => n.nodeId.startsWith("burst-"))).toHaveLength(5);
    const { tokens } = await nodes().listJoinTokens({});
    const token = tokens.find((t) => t.id === created.token?.id);
    expect(token?.uses).toBe(5);
    expect(token?.maxUses).toBe(5);
  });

  it("refuses an enrollment whose token is revoked after the handshake authenticated", async () => {
    const created = await nodes().createJoinToken({ description: "late revoke" });
    const stream = openRawStream(tc.agentAddress, created.secret);
    // The stream authenticates at once; its Hello comes only after the revocation.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await nodes().revokeJoinToken({ id: created.token?.id ?? "" });
    stream.send(hello("late-revoke-1"));
    const first = await stream.next(10_000).then(
      (m) => m.body.case,
      () => "ended",
    );
    stream.close();
    expect(first).toBe("ended");
    const ended = await stream.ended;
    expect(ended.code).toBe(status.UNAUTHENTICATED);
    expect(ended.details).toBe("join token has been revoked");
    await expect(nodes().getNode({ nodeId: "late-revoke-1" })).rejects.toThrow(/no node/);
  });

  it("refuses an enrollment whose token expires after the handshake authenticated", async () => {
    const created = await nodes().createJoinToken({
      description: "late expiry",
      ttl: { seconds: 5n, nanos: 0 },
    });
    const stream = openRawStream(tc.agentAddress, created.secret);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Past the token's expiry, within the handshake's 10 s on the same clock.
    clock.advanceTo(clock.ms + 6_000);
    stream.send(hello("late-expiry-1"));
    const first = await stream.next(10_000).then(
      (m) => m.body.case,
      () => "ended",
    );
    stream.close();
    expect(first).toBe("ended");
    const ended = await stream.ended;
    expect(ended.code).toBe(status.UNAUTHENTICATED);
    expect(ended.details).toBe("join token has expired");
    await expect(nodes().getNode({ nodeId: "late-expiry-1" })).rejects.toThrow(/no node/);
  });

  it("keeps fake nodes that claim canary=true and a pool in Hello out of the canary batch", async () => {
    const fleetToken = await nodes().createJoinToken({
      description: "web fleet",
      labels: { pool: "web", group: "canary-attack" },
    });
    const realIds = Array.from({ length: 40 }, (_, i) => `real-${String(i).padStart(2, "0")}`);
    for (const id of realIds) {
      expect((await attempt(tc, fleetToken.secret, id)).code).toBe("welcomed");
    }
    const leaked = await nodes().createJoinToken({ description: "leaked" });
    const fakeIds = Array.from({ length: 4 }, (_, i) => `fake-${i}`);
    for (const id of fakeIds) {
      const claim = { canary: "true", pool: "web", group: "canary-attack" };
      expect((await attempt(tc, leaked.secret, id, claim)).code).toBe("welcomed");
    }
    // Ground truth: labels come from the token and the administrator only.
    for (const id of fakeIds) {
      const { node } = await nodes().getNode({ nodeId: id });
      expect(node?.labels).toEqual({});
      expect(node?.pool).toBe("default");
    }
    const { node: real } = await nodes().getNode({ nodeId: "real-07" });
    expect(real?.labels).toEqual({ pool: "web", group: "canary-attack" });
    expect(real?.pool).toBe("web");

    const plan = await tc.client(CampaignService).planCampaign({
      spec: {
        targetVersion: "2.0.0",
        selector: { labels: { group: "canary-attack" } },
        batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 0n, nanos: 0 } })),
      },
    });
    // Reference: only the 40 real nodes match, in the fleet's keyed order (no canary label).
    const hashOrder = inReferenceOrder(realIds, await fleetOrderSecret(tc.database.url));
    expect(plan.totalNodes).toBe(40);
    expect(plan.batches[0]?.nodeIds).toEqual(hashOrder.slice(0, 2));

    // An administrator's canary label is trusted, and audited.
    const labelled = await nodes().labelNode({ nodeId: "real-30", set: { canary: "true" } });
    expect(labelled.node?.labels).toEqual({ pool: "web", group: "canary-attack", canary: "true" });
    const replan = await tc.client(CampaignService).planCampaign({
      spec: {
        targetVersion: "2.0.0",
        selector: { labels: { group: "canary-attack" } },
        batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 0n, nanos: 0 } })),
      },
    });
    expect(replan.batches[0]?.nodeIds[0]).toBe("real-30");
    const audit = await tc.client(AuditService).listAuditEvents({ action: "node.label" });
    expect(audit.events.map((e) => e.nodeId)).toContain("real-30");
  });

  it("keeps an assigned label over what the node reports on its next Hello", async () => {
    const token = await nodes().createJoinToken({ description: "one", labels: { pool: "db" } });
    const stream = openRawStream(tc.agentAddress, token.secret);
    stream.send(hello("assigned-1", { labels: { pool: "evil", canary: "true" } }));
    const welcome = await stream.next(10_000);
    const nodeToken = welcome.body.case === "welcome" ? welcome.body.value.nodeToken : "";
    stream.close();
    await stream.ended;
    const again = openRawStream(tc.agentAddress, nodeToken);
    again.send(hello("assigned-1", { labels: { pool: "evil", canary: "true" } }));
    expect((await again.next(10_000)).body.case).toBe("welcome");
    again.close();
    await again.ended;
    const { node } = await nodes().getNode({ nodeId: "assigned-1" });
    expect(node?.labels).toEqual({ pool: "db" });
    expect(node?.pool).toBe("db");
  });
});

describe("labels the operator configures as agent-reported", { timeout: 120_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({ config: { enrollment: { agentReportedLabels: ["rack"] } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("are taken from Hello; every other label is not", async () => {
    const token = await tc.joinToken();
    const stream = openRawStream(tc.agentAddress, token);
    stream.send(hello("reported-1", { labels: { rack: "r7", canary: "true" } }));
    expect((await stream.next(10_000)).body.case).toBe("welcome");
    stream.close();
    await stream.ended;
    const { node } = await tc.client(NodeService).getNode({ nodeId: "reported-1" });
    expect(node?.labels).toEqual({ rack: "r7" });
  });
});
