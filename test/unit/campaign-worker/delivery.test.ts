/**
 * Delivery on the memory campaign store (whose notifications fan out synchronously), fake
 * gateways (one per simulated Control, each holding some nodes' streams) and the manual clock.
 */
import { describe, expect, it } from "vitest";
import type { AgentEventListener, ConnectedNode } from "../../../control/agents/events.js";
import type { EncodedOperation } from "../../../control/agents/operation-frame.js";
import {
  createCampaign,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import {
  MemoryCampaignStore,
  type Outgoing,
  type ReportWrite,
} from "../../../control/campaign-store/index.js";
import { Delivery } from "../../../control/campaign-worker/delivery.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { OUTBOX_CHANNEL } from "../../../control/shared/notify-channels.js";

const RESEND_MS = 30_000;
const PERIOD_MS = 10_000;

/** The streams one Control holds; it records what it sent. */
class Streams implements WorkerGateway {
  readonly sent: string[] = [];
  private readonly live = new Set<string>();
  send(nodeId: string, operation: EncodedOperation): boolean {
    if (!this.live.has(nodeId)) return false;
    this.sent.push(`${nodeId}:${operation.id}`);
    return true;
  }
  connected(nodeId: string): ConnectedNode | undefined {
    return this.live.has(nodeId) ? ({ nodeId } as ConnectedNode) : undefined;
  }
  nodeIds(): Iterable<string> {
    return this.live;
  }
  subscribe(_listener: AgentEventListener): () => void {
    return () => {};
  }
  open(nodeId: string): void {
    this.live.add(nodeId);
  }
  close(nodeId: string): void {
    this.live.delete(nodeId);
  }
}

async function world(nodeIds: string[]) {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCampaignStore(clock);
  const spec = resolveSpec({
    targetVersion: "2.0.0",
    batches: [{ percent: 100, minDurationMs: 0 }],
  });
  const plan = planCampaign(
    spec,
    nodeIds.map((id) => ({
      id,
      labels: {},
      pool: "",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const { campaign, nodes } = createCampaign({
    id: "c1",
    spec,
    plan,
    target: { version: "2.0.0", sequence: 2 },
    now: clock.ms,
  });
  await store.transaction((tx) =>
    tx.insertCampaign({
      campaign,
      nodes: nodes.map((n) => ({ ...n, state: "offered" as const })),
      createdBy: "t",
      createdByIp: "",
      now: clock.now(),
    }),
  );
  /** Commits an upgrade for each node, as a decision does; returns what it would send. */
  const decide = async (ids: string[]): Promise<Outgoing[]> => {
    const ops = ids.map((nodeId) => {
      const id = operationId("c1", nodeId, "upgrade");
      return { id, campaignId: "c1", nodeId, kind: "upgrade", payload: new Uint8Array([1]) };
    });
    await store.transaction(async (tx) => {
      const row = await tx.readCampaign("c1", true);
      await tx.writeDecision({
        campaignId: "c1",
        version: row?.version ?? 0,
        campaign: undefined,
        nodes: [],
        operations: ops.map((o) => ({ ...o, failure: undefined })),
        appliedCommands: [],
        audits: [],
        now: clock.now(),
      });
    });
    return ops.map((o) => ({ nodeId: o.nodeId, operation: { id: o.id, bytes: o.payload } }));
  };
  /** A Control: its streams and its delivery, listening for outbox notifications. */
  const control = (listening = true) => {
    const streams = new Streams();
    const delivery = new Delivery({
      store,
      gateway: streams,
      clock,
      log: createLogger({ level: "silent" }),
      resendAfterMs: RESEND_MS,
      periodMs: PERIOD_MS,
    });
    if (listening) {
      store.listen([OUTBOX_CHANNEL], {
        onNotify: (_channel, lines) => delivery.noteNotified(lines),
      });
    }
    return { streams, delivery };
  };
  return { clock, store, decide, control };
}

const upgrade = (nodeId: string) => `${nodeId}:c1/${nodeId}/upgrade`;

describe("delivery", () => {
  it("sends operations to the nodes connected here, and announces the others so the Control holding each sends it", async () => {
    const w = await world(["n1", "n2", "n3"]);
    const a = w.control();
    const b = w.control();
    a.streams.open("n1");
    b.streams.open("n2");
    // n3 is connected nowhere: nobody sends it anything until it connects.
    await a.delivery.deliver(await w.decide(["n1", "n2", "n3"]));
    expect(a.streams.sent).toEqual([upgrade("n1")]);
    expect(b.delivery.pending).toBe(true);
    await b.delivery.step();
    expect(b.streams.sent).toEqual([upgrade("n2")]);
    expect(w.store.tables.operations.get("c1/n2/upgrade")?.sendCount).toBe(1);
    expect(w.store.tables.operations.get("c1/n3/upgrade")?.sendCount).toBe(0);
  });

  it("sends a node its unacknowledged operations when it connects here, after it moved from another Control", async () => {
    const w = await world(["n1"]);
    const a = w.control();
    const b = w.control();
    a.streams.open("n1");
    await a.delivery.deliver(await w.decide(["n1"]));
    a.streams.close("n1");
    b.streams.open("n1");
    b.delivery.noteConnected("n1");
    await b.delivery.step();
    expect(a.streams.sent).toEqual([upgrade("n1")]);
    expect(b.streams.sent).toEqual([upgrade("n1")]);
  });

  it("makes up for a missed notification with its periodic pass, and re-sends only after resendAfterMs", async () => {
    const w = await world(["n1"]);
    const leader = w.control();
    const deaf = w.control(false);
    deaf.streams.open("n1");
    await deaf.delivery.step(); // its first pass: nothing yet
    await leader.delivery.deliver(await w.decide(["n1"]));
    expect(deaf.streams.sent).toEqual([]);
    w.clock.advance(PERIOD_MS);
    await deaf.delivery.step();
    expect(deaf.streams.sent).toEqual([upgrade("n1")]);
    w.clock.advance(PERIOD_MS);
    await deaf.delivery.step();
    expect(deaf.streams.sent).toHaveLength(1);
    w.clock.advance(RESEND_MS);
    await deaf.delivery.step();
    expect(deaf.streams.sent).toEqual([upgrade("n1"), upgrade("n1")]);
  });

  it("reads everything at once after a gap in notifications", async () => {
    const w = await world(["n1"]);
    const leader = w.control();
    const deaf = w.control(false);
    deaf.streams.open("n1");
    await deaf.delivery.step();
    await leader.delivery.deliver(await w.decide(["n1"]));
    deaf.delivery.gap();
    await deaf.delivery.step();
    expect(deaf.streams.sent).toEqual([upgrade("n1")]);
  });

  it("never sends an operation its Agent reported on", async () => {
    const w = await world(["n1"]);
    const a = w.control();
    await a.delivery.deliver(await w.decide(["n1"]));
    const report: ReportWrite = {
      id: "c1/n1/upgrade",
      nodeId: "n1",
      phase: "ACCEPTED",
      code: "",
      message: "",
      version: "2.0.0",
      at: w.clock.now(),
      bootId: null,
    };
    await w.store.recordFacts([report], []);
    a.streams.open("n1");
    a.delivery.noteConnected("n1");
    w.clock.advance(RESEND_MS);
    await a.delivery.step();
    expect(a.streams.sent).toEqual([]);
  });

  it("tries a failed read again a second later", async () => {
    const w = await world(["n1"]);
    const a = w.control();
    await a.delivery.deliver(await w.decide(["n1"]));
    await a.delivery.step();
    a.streams.open("n1");
    a.delivery.noteConnected("n1");
    w.store.outage(true);
    await a.delivery.step();
    w.store.outage(false);
    expect(a.streams.sent).toEqual([]);
    expect(a.delivery.nextDue).toBe(w.clock.ms + 1000);
    w.clock.advance(1000);
    await a.delivery.step();
    expect(a.streams.sent).toEqual([upgrade("n1")]);
  });
});
