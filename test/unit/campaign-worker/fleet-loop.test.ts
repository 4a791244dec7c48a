/**
 * The leader's fleet passes in the campaign worker, on the memory stores, a fake gateway and
 * the manual clock: a node that comes online behind its desired version gets a convergence
 * campaign at once (not an interval later), a burst of failures halts convergence with an audit
 * row and the metrics hook, and a completed campaign records its target as a desired version.
 */
import { describe, expect, it } from "vitest";
import type { AgentEventListener, ConnectedNode } from "../../../control/agents/events.js";
import {
  type CampaignNode,
  createCampaign,
  type DesiredVersion,
  desiredIdOf,
  type NodeState,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

const T0 = Date.UTC(2031, 0, 1);
const INTERVAL = 60_000;

class Gateway implements WorkerGateway {
  private readonly live = new Map<string, ConnectedNode>();
  private readonly listeners = new Set<AgentEventListener>();
  constructor(private readonly clock: ManualClock) {}
  send() {
    return true;
  }
  connected(nodeId: string) {
    return this.live.get(nodeId);
  }
  subscribe(l: AgentEventListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  connect(nodeId: string, version = "1.0.0") {
    const node: ConnectedNode = {
      nodeId,
      sessionId: `${nodeId}-s`,
      bootId: "b0",
      agentVersion: version,
      previousVersion: "",
      platform: "linux-amd64",
      pool: "p",
      labels: {},
      capabilities: ["upgrade.v1"],
      confirmedSequence: 1,
      connectedAt: this.clock.now(),
    };
    this.live.set(nodeId, node);
    for (const l of this.listeners) l({ kind: "connected", node });
  }
}

function world(nodeIds: readonly string[]) {
  const clock = new ManualClock(T0);
  const store = new MemoryCampaignStore(clock);
  const fleetStore = new MemoryFleetStore(store);
  store.tables.releases.set("2.0.0", {
    version: "2.0.0",
    sequence: 2,
    envelope: { payloadType: "", payload: new Uint8Array(), signatures: [] },
    artifacts: [{ platform: "linux-amd64", sha256: "0".repeat(64), size: 1, url: "" }],
  });
  for (const id of nodeIds) {
    store.putNode({
      id,
      pool: "p",
      labels: {},
      boot_id: "b0",
      agent_version: "1.0.0",
      capabilities: ["upgrade.v1"],
      platform: "linux-amd64",
      enabled: true,
      last_seen: new Date(T0 - 1000),
      confirmed_sequence: 1,
    });
  }
  const gateway = new Gateway(clock);
  const halted: string[] = [];
  const worker = createCampaignWorker({
    store,
    gateway,
    clock,
    log: createLogger({ level: "silent" }),
    holder: "ctl-1",
    intervalMs: 5000,
    publicUrl: () => "http://control",
    offlineAfterMs: 60_000,
    debounceMs: 20,
    fleet: { store: fleetStore, intervalMs: INTERVAL, onHalted: (id) => halted.push(id) },
  });
  const unlisten = worker.listen();
  /** Steps the worker until `ms` of virtual time passed, as its loop would. */
  const runFor = async (ms: number) => {
    const end = clock.ms + ms;
    while (clock.ms < end) {
      const { next, busy } = await worker.step();
      clock.advanceTo(Math.min(end, busy ? clock.ms + 20 : Math.max(next, clock.ms + 1)));
    }
  };
  return { clock, store, fleetStore, gateway, halted, runFor, unlisten };
}

function desired(over: Partial<DesiredVersion> = {}): DesiredVersion {
  const selector = { labels: {}, pools: ["p"], nodeIds: [] };
  const exclude = { nodeIds: [], tags: {} };
  return {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: { version: "2.0.0", sequence: 2 },
    setAt: T0 - 10_000,
    setBy: "alice",
    settings: {
      reconnectTimeoutMs: 60_000,
      configGraceMs: 0,
      disruptionBudgetPercent: 100,
      maxFailures: 2,
    },
    haltedAt: undefined,
    haltedReason: undefined,
    ...over,
  };
}

/** Inserts a finished campaign over `nodes` (their final states), created by `createdBy`. */
async function finished(
  store: MemoryCampaignStore,
  id: string,
  createdBy: string,
  nodes: Record<string, NodeState>,
  spec = resolveSpec({
    targetVersion: "2.0.0",
    selector: { pools: ["p"] },
    batches: [{ percent: 100, minDurationMs: 0 }],
  }),
) {
  const plan = planCampaign(
    spec,
    Object.keys(nodes).map((nodeId) => ({
      id: nodeId,
      labels: {},
      pool: "p",
      enabled: true,
      everConnected: true,
      capabilities: ["upgrade.v1"],
      agentVersion: "1.0.0",
    })),
  );
  const c = createCampaign({
    id,
    spec,
    plan,
    target: { version: "2.0.0", sequence: 2 },
    now: T0 - 5000,
  });
  const records: CampaignNode[] = c.nodes.map((n) => ({
    ...n,
    state: nodes[n.nodeId] as NodeState,
  }));
  await store.transaction(async (tx) => {
    await tx.insertCampaign({
      campaign: c.campaign,
      nodes: records,
      createdBy,
      createdByIp: "",
      now: new Date(T0 - 5000),
    });
  });
  await store.transaction((tx) =>
    tx.writeDecision({
      campaignId: id,
      version: 1,
      campaign: { ...c.campaign, phase: "completed", finishedAt: T0 - 1000 },
      nodes: [],
      operations: [],
      appliedCommands: [],
      audits: [],
      now: new Date(T0 - 1000),
    }),
  );
}

describe("the leader's fleet passes", () => {
  it("a node that comes online behind its desired version is converged at once, not an interval later", async () => {
    const w = world(["n1", "n2"]);
    const d = desired();
    w.fleetStore.tables.desired.set(d.id, d);
    await w.runFor(5000);
    expect(w.store.tables.campaigns.size).toBe(0);
    w.gateway.connect("n1");
    await w.runFor(2000);
    const started = [...w.store.tables.campaigns.values()];
    expect(started.map((c) => [c.campaign.id, c.createdBy, c.createdAt - T0])).toEqual([
      [`${d.id}-1`, `convergence:${d.id}`, 5000],
    ]);
    expect(w.store.tables.nodes.get(`${d.id}-1`)?.map((n) => n.nodeId)).toEqual(["n1"]);
    expect(w.store.tables.audits.find((a) => a.campaignId === `${d.id}-1`)?.actor).toBe("control");
    w.unlisten();
  });

  it("a burst of failures halts convergence, says so in the audit log, tells the metrics hook and starts nothing", async () => {
    const w = world(["n1", "n2", "n3"]);
    const d = desired();
    w.fleetStore.tables.desired.set(d.id, d);
    await finished(w.store, `${d.id}-1`, `convergence:${d.id}`, { n2: "failed", n3: "timed_out" });
    w.gateway.connect("n1");
    await w.runFor(3000);
    const after = w.fleetStore.tables.desired.get(d.id);
    expect(after?.haltedAt).toBe(T0);
    expect(after?.haltedReason).toBe(
      "convergence to 2.0.0 halted: 2 node(s) failed (n2, n3), the limit is 2",
    );
    const audit = w.store.tables.audits.filter((a) => a.action === "convergence.halt");
    expect(audit.map((a) => [a.actor, a.campaignId, a.message])).toEqual([
      ["control", `${d.id}-1`, `desired version ${d.id}: ${after?.haltedReason}`],
    ]);
    expect(w.halted).toEqual([d.id]);
    expect([...w.store.tables.campaigns.keys()]).toEqual([`${d.id}-1`]);
    w.unlisten();
  });

  it("a completed campaign's target becomes the desired version of its selector, once", async () => {
    const w = world(["n1"]);
    await finished(w.store, "c1", "alice", { n1: "succeeded" });
    await w.runFor(1000);
    const all = [...w.fleetStore.tables.desired.values()];
    expect(all.map((x) => [x.setBy, x.target.version, x.selector.pools, x.setAt])).toEqual([
      ["campaign:c1", "2.0.0", ["p"], T0 - 1000],
    ]);
    expect(w.store.tables.audits.filter((a) => a.action === "desired.record")).toHaveLength(1);
    await w.runFor(INTERVAL + 1000);
    expect(w.store.tables.audits.filter((a) => a.action === "desired.record")).toHaveLength(1);
    w.unlisten();
  });
});
