/**
 * The campaign worker on the memory campaign store, a fake gateway and the manual clock: no
 * database, no sockets, no wall time.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type {
  AgentEvent,
  AgentEventListener,
  ConnectedNode,
} from "../../../control/agents/events.js";
import {
  type CampaignNode,
  type CampaignSpecInput,
  createCampaign,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, WORKER_LEASE } from "../../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import {
  ObservedStateSchema,
  OperationPhase,
  OperationSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const OLD = "1.0.0";
const NEW = "2.0.0";
const OFFLINE_AFTER = 60_000;

/** A gateway whose streams the test opens and closes; it records what was sent. */
class FakeGateway implements WorkerGateway {
  readonly sent: { nodeId: string; id: string; kind: string }[] = [];
  private readonly live = new Map<string, ConnectedNode>();
  private readonly listeners = new Set<AgentEventListener>();
  constructor(private readonly clock: ManualClock) {}
  send(nodeId: string, op: { id: string; bytes: Uint8Array }) {
    if (!this.live.has(nodeId)) return false;
    this.sent.push({
      nodeId,
      id: op.id,
      kind: fromBinary(OperationSchema, op.bytes).kind.case ?? "",
    });
    return true;
  }
  connected(nodeId: string) {
    return this.live.get(nodeId);
  }
  subscribe(l: AgentEventListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  private emit(e: AgentEvent) {
    for (const l of this.listeners) l(e);
  }
  connect(nodeId: string, boot = "b0", version = OLD) {
    const node: ConnectedNode = {
      nodeId,
      sessionId: `${nodeId}-${boot}`,
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
    this.live.set(nodeId, node);
    this.emit({ kind: "connected", node });
  }
  disconnect(nodeId: string) {
    const node = this.live.get(nodeId);
    this.live.delete(nodeId);
    if (node) this.emit({ kind: "disconnected", nodeId, sessionId: node.sessionId, reason: "" });
  }
  report(nodeId: string, operationId: string, phase: OperationPhase) {
    this.emit({
      kind: "observed",
      nodeId,
      observed: create(ObservedStateSchema, { operationId, phase, version: NEW }),
      at: this.clock.now(),
    });
  }
}

function world(nodeIds: string[], pool = (_: string) => "") {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCampaignStore(clock);
  const gateway = new FakeGateway(clock);
  store.tables.releases.set(NEW, {
    version: NEW,
    sequence: 2,
    envelope: { payloadType: "t", payload: new Uint8Array(), signatures: [] },
    artifacts: [{ platform: "linux-amd64", sha256: "0".repeat(64), size: 1, url: "" }],
  });
  for (const id of nodeIds) {
    store.putNode({
      id,
      pool: pool(id),
      boot_id: "b0",
      agent_version: OLD,
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: clock.now(),
    });
  }
  const worker = (holder = "w1") =>
    createCampaignWorker({
      store,
      gateway,
      clock,
      log: createLogger({ level: "silent" }),
      holder,
      intervalMs: 5000,
      publicUrl: () => "http://control",
      offlineAfterMs: OFFLINE_AFTER,
    });
  const start = async (id: string, ids: string[], spec: Partial<CampaignSpecInput> = {}) => {
    const resolved = resolveSpec({
      targetVersion: NEW,
      batches: [{ percent: 100, minDurationMs: 0 }],
      ...spec,
    });
    const plan = planCampaign(
      resolved,
      ids.map((nodeId) => ({
        id: nodeId,
        labels: {},
        pool: pool(nodeId),
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: OLD,
      })),
    );
    const { campaign, nodes } = createCampaign({
      id,
      spec: resolved,
      plan,
      target: { version: NEW, sequence: 2 },
      now: clock.ms,
    });
    await store.transaction((tx) =>
      tx.insertCampaign({ campaign, nodes, createdBy: "t", createdByIp: "", now: clock.now() }),
    );
  };
  const nodesOf = (id: string): CampaignNode[] => store.tables.nodes.get(id) ?? [];
  return { clock, store, gateway, worker, start, nodesOf };
}

describe("the campaign worker", () => {
  it("takes the lease, decides a campaign and sends its offers to connected nodes", async () => {
    const w = world(["n1", "n2"]);
    w.gateway.connect("n1");
    w.gateway.connect("n2");
    await w.start("c1", ["n1", "n2"], { disruptionBudgetPercent: 100 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    expect(worker.lease.epoch).toBe(1);
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["offered", "offered"]);
    expect(w.gateway.sent.map((s) => s.kind)).toEqual(["agentUpgrade", "agentUpgrade"]);
  });

  it("does nothing while another holder leads, and takes over once that holder's session ended", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const first = w.worker("w1");
    await first.step();
    const second = w.worker("w2");
    await second.step();
    expect(second.lease.epoch).toBeUndefined();
    w.store.endSession("w1");
    w.clock.advance(5000);
    await second.step();
    expect(second.lease.epoch).toBe(2);
  });

  it("ends its leadership when a fenced write is refused, and writes nothing", async () => {
    const w = world(["n1"]);
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const lease = w.store.tables.leases.get(WORKER_LEASE);
    if (lease) lease.holder = "someone-else";
    w.gateway.connect("n1");
    w.clock.advance(100);
    await worker.step();
    expect(worker.lease.epoch).toBeUndefined();
    expect(w.nodesOf("c1")[0]?.state).toBe("waiting");
    expect(w.gateway.sent).toEqual([]);
  });

  it("re-sends an unacknowledged offer when its node reconnects", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.disconnect("n1");
    w.clock.advance(1000);
    w.gateway.connect("n1");
    await worker.step();
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade", "c1/n1/upgrade"]);
  });

  it("takes reports through the store into the next decision", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.gateway.report("n1", "c1/n1/upgrade", OperationPhase.REFUSED);
    w.clock.advance(100);
    await worker.step();
    expect(w.nodesOf("c1")[0]).toMatchObject({ state: "failed", code: "rejected" });
  });

  it("does not skip nodes as offline right after it became leader, only offlineAfter later", async () => {
    const w = world(["n1", "n2"]);
    await w.start("c1", ["n1", "n2"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    w.clock.advance(OFFLINE_AFTER - 1000);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.state)).toEqual(["waiting", "waiting"]);
    // Nothing wakes a campaign when a node turns offline: the periodic pass (5 s) sees it.
    w.clock.advance(5000);
    await worker.step();
    expect(w.nodesOf("c1").map((n) => n.code)).toEqual(["node_offline", "node_offline"]);
  });

  it("never offers a node disabled since its registry row was read", async () => {
    const w = world(["n1"]);
    await w.start("c1", ["n1"]);
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const row = w.store.tables.registry.get("n1");
    if (row) w.store.putNode({ ...row, enabled: false });
    w.gateway.connect("n1");
    w.clock.advance(100);
    await worker.step();
    expect(w.gateway.sent).toEqual([]);
    expect(w.nodesOf("c1")[0]).toMatchObject({ state: "skipped", code: "node_disabled" });
  });

  it("counts the nodes other campaigns hold in flight against a shared pool's budget", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    const w = world(ids, () => "p");
    for (const id of ids) w.gateway.connect(id);
    for (let c = 0; c < 5; c++)
      await w.start(`c${c}`, ids.slice(c * 4, c * 4 + 4), { disruptionBudgetPercent: 10 });
    const worker = w.worker();
    worker.listen();
    await worker.step();
    const offered = [0, 1, 2, 3, 4]
      .flatMap((c) => w.nodesOf(`c${c}`))
      .filter((n) => n.state === "offered");
    expect(offered).toHaveLength(2);
  });

  it("runs on the Clock: run() sleeps until the next due time and steps when it is advanced", async () => {
    const w = world(["n1"]);
    w.gateway.connect("n1");
    const worker = w.worker();
    const stop = new AbortController();
    const running = worker.run(stop.signal);
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await settle();
    expect(worker.lease.epoch).toBe(1);
    await w.start("c1", ["n1"]);
    expect(w.gateway.sent).toEqual([]);
    w.clock.advance(5000);
    await settle();
    w.clock.advance(20);
    await settle();
    expect(w.gateway.sent.map((s) => s.id)).toEqual(["c1/n1/upgrade"]);
    stop.abort();
    w.clock.advance(1000);
    await running;
  });
});
