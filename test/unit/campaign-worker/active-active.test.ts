/**
 * Two Controls' workers on one memory campaign store (whose notifications fan out at once),
 * each with the streams of its own nodes, and the manual clock: the leader decides for nodes
 * held by the other, which sends them their operations; what the other hears (reports, config
 * failures, Hellos, campaign starts) reaches the leader's next decision.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type {
  AgentEvent,
  AgentEventListener,
  ConnectedNode,
} from "../../../control/agents/events.js";
import type { EncodedOperation } from "../../../control/agents/operation-frame.js";
import { createCampaign, planCampaign, resolveSpec } from "../../../control/campaign/index.js";
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { NODES_CHANNEL } from "../../../control/shared/notify-channels.js";
import {
  ObservedStateSchema,
  OperationPhase,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const OLD = "1.0.0";
const NEW = "2.0.0";

/** The streams one Control holds; connecting writes the registry row as a Hello does. */
class Streams implements WorkerGateway {
  readonly sent: string[] = [];
  private readonly live = new Map<string, ConnectedNode>();
  private readonly listeners = new Set<AgentEventListener>();
  constructor(
    private readonly holder: string,
    private readonly store: MemoryCampaignStore,
    private readonly clock: ManualClock,
  ) {}
  send(nodeId: string, op: EncodedOperation): boolean {
    if (!this.live.has(nodeId)) return false;
    this.sent.push(`${nodeId}:${op.id}`);
    return true;
  }
  connected(nodeId: string) {
    return this.live.get(nodeId);
  }
  nodeIds() {
    return this.live.keys();
  }
  subscribe(l: AgentEventListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  private emit(e: AgentEvent) {
    for (const l of this.listeners) l(e);
  }
  async connect(nodeId: string, boot: string, version = OLD) {
    const node: ConnectedNode = {
      nodeId,
      sessionId: `${this.holder}-${nodeId}-${boot}`,
      bootId: boot,
      agentVersion: version,
      previousVersion: "",
      platform: "linux-amd64",
      pool: "",
      labels: {},
      capabilities: ["upgrade.v1"],
      confirmedSequence: 1,
      connectedAt: this.clock.now(),
    };
    this.store.putNode({
      id: nodeId,
      pool: "",
      boot_id: boot,
      agent_version: version,
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: this.clock.now(),
      online: true,
      held_by: this.holder,
    });
    await this.store.notify(NODES_CHANNEL, [nodeId]);
    this.live.set(nodeId, node);
    this.emit({ kind: "connected", node });
  }
  report(nodeId: string, operationId: string, phase: OperationPhase) {
    this.emit({
      kind: "observed",
      nodeId,
      observed: create(ObservedStateSchema, { operationId, phase, version: NEW }),
      at: this.clock.now(),
    });
  }
  configFailed(nodeId: string) {
    this.emit({
      kind: "config_status",
      nodeId,
      ok: false,
      message: "bad",
      at: this.clock.now(),
    });
  }
}

async function world() {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCampaignStore(clock);
  store.tables.releases.set(NEW, {
    version: NEW,
    sequence: 2,
    envelope: { payloadType: "t", payload: new Uint8Array(), signatures: [] },
    artifacts: [{ platform: "linux-amd64", sha256: "0".repeat(64), size: 1, url: "" }],
  });
  const control = (holder: string) => {
    const streams = new Streams(holder, store, clock);
    const worker = createCampaignWorker({
      store,
      gateway: streams,
      clock,
      log: createLogger({ level: "silent" }),
      holder,
      intervalMs: 60_000,
      publicUrl: () => "http://control",
      offlineAfterMs: 600_000,
    });
    worker.listen();
    return { streams, worker };
  };
  const start = async (id: string, nodeIds: string[]) => {
    const spec = resolveSpec({
      targetVersion: NEW,
      batches: [{ percent: 100, minDurationMs: 0 }],
      disruptionBudgetPercent: 100,
    });
    const plan = planCampaign(
      spec,
      nodeIds.map((n) => ({
        id: n,
        labels: {},
        pool: "",
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: OLD,
      })),
    );
    const { campaign, nodes } = createCampaign({
      id,
      spec,
      plan,
      target: { version: NEW, sequence: 2 },
      now: clock.ms,
    });
    await store.transaction((tx) =>
      tx.insertCampaign({ campaign, nodes, createdBy: "t", createdByIp: "", now: clock.now() }),
    );
  };
  const stateOf = (campaignId: string, nodeId: string) => {
    const n = store.tables.nodes.get(campaignId)?.find((x) => x.nodeId === nodeId);
    return n === undefined ? undefined : `${n.state}${n.code ? `/${n.code}` : ""}`;
  };
  /** Lets the listeners' microtasks (a listener's first gap) run. */
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { clock, store, control, start, stateOf, settle };
}

describe("two Controls' workers on one store", () => {
  it("offers a node held by the other Control, which sends it; its report there reaches the leader", async () => {
    const w = await world();
    const a = w.control("control-a");
    const b = w.control("control-b");
    await w.settle();
    await a.worker.step(); // a leads
    await b.worker.step();
    expect(a.worker.lease.epoch).toBe(1);
    expect(b.worker.lease.epoch).toBeUndefined();
    await a.streams.connect("n1", "a-boot");
    await b.streams.connect("n2", "b-boot");
    await a.worker.step(); // each sends a node that connected its operations: none yet
    await b.worker.step();
    await w.start("c1", ["n1", "n2"]);
    a.worker.wake("c1");
    await a.worker.step();
    expect([w.stateOf("c1", "n1"), w.stateOf("c1", "n2")]).toEqual(["offered", "offered"]);
    expect(a.streams.sent).toEqual(["n1:c1/n1/upgrade"]);
    // The leader announced n2's operation; only b holds n2's stream.
    expect(b.worker.delivery.pending).toBe(true);
    await b.worker.step();
    expect(b.streams.sent).toEqual(["n2:c1/n2/upgrade"]);

    b.streams.report("n2", "c1/n2/upgrade", OperationPhase.REFUSED);
    w.clock.advance(100);
    await b.worker.step(); // writes the report and announces it
    w.clock.advance(100);
    await a.worker.step();
    expect(w.stateOf("c1", "n2")).toBe("failed/rejected");
  });

  it("sees a node come back on the other Control with the target version and a new boot id", async () => {
    const w = await world();
    const a = w.control("control-a");
    const b = w.control("control-b");
    await w.settle();
    await a.worker.step();
    await b.streams.connect("n2", "boot-1");
    await w.start("c1", ["n2"]);
    a.worker.wake("c1");
    await a.worker.step();
    await b.worker.step();
    b.streams.report("n2", "c1/n2/upgrade", OperationPhase.RESTARTING);
    await b.worker.step();
    await a.worker.step();
    expect(w.stateOf("c1", "n2")).toBe("restarting");
    // It restarts and its Hello lands on the other Control: the leader re-reads its row.
    await b.streams.connect("n2", "boot-2", NEW);
    w.clock.advance(100);
    await a.worker.step();
    expect(w.stateOf("c1", "n2")).toBe("succeeded");
    // The confirm goes out through the Control holding the node.
    await b.worker.step();
    expect(b.streams.sent).toEqual(["n2:c1/n2/upgrade", "n2:c1/n2/confirm"]);
  });

  it("records a config failure heard by the Control that does not lead against the node's campaign", async () => {
    const w = await world();
    const a = w.control("control-a");
    const b = w.control("control-b");
    await w.settle();
    await a.worker.step();
    await b.streams.connect("n2", "boot-1");
    await w.start("c1", ["n2"]);
    b.streams.configFailed("n2");
    await b.worker.step();
    expect(w.store.tables.configFailures.map((f) => [f.campaign_id, f.node_id])).toEqual([
      ["c1", "n2"],
    ]);
  });

  it("has the leader decide at once a campaign started through the other Control", async () => {
    const w = await world();
    const a = w.control("control-a");
    const b = w.control("control-b");
    await w.settle();
    await a.worker.step();
    await a.worker.step(); // its first periodic pass is spent: only a wake makes it decide now
    await b.streams.connect("n2", "boot-1");
    await w.start("c1", ["n2"]);
    b.worker.wake("c1");
    w.clock.advance(100);
    await a.worker.step();
    expect(w.stateOf("c1", "n2")).toBe("offered");
  });
});
