/**
 * The leader's fleet passes' world for unit tests: the memory campaign and fleet stores, a fake
 * gateway, the manual clock and a worker with fleet passes every {@link INTERVAL}.
 */
import { create } from "@bufbuild/protobuf";
import type { AgentEventListener, ConnectedNode } from "../../../control/agents/events.js";
import {
  type CampaignNode,
  type CampaignPhase,
  createCampaign,
  type DesiredVersion,
  desiredIdOf,
  type NodeState,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore, MemoryFleetStore } from "../../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import type { FleetOptions } from "../../../control/campaign-worker/fleet-loop.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import {
  ObservedStateSchema,
  type OperationPhase,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** The world's start time. */
export const T0 = Date.UTC(2031, 0, 1);
/** How often the fleet passes run. */
export const INTERVAL = 60_000;

/** A gateway whose streams the test opens; sends always succeed and are recorded. */
export class Gateway implements WorkerGateway {
  /** Every operation sent, in order (re-sends included). */
  readonly sent: { nodeId: string; id: string }[] = [];
  private readonly live = new Map<string, ConnectedNode>();
  private readonly listeners = new Set<AgentEventListener>();
  constructor(private readonly clock: ManualClock) {}
  send(nodeId: string, op: { id: string }) {
    this.sent.push({ nodeId, id: op.id });
    return true;
  }
  /** The node reports `phase` on operation `operationId`. */
  report(nodeId: string, operationId: string, phase: OperationPhase) {
    const observed = create(ObservedStateSchema, { operationId, phase, version: "2.0.0" });
    for (const l of this.listeners) l({ kind: "observed", nodeId, observed, at: this.clock.now() });
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

/**
 * A world over `nodeIds` (registry rows on 1.0.0 in pool p, none connected), with fleet
 * options besides the defaults (`unlisted`: a release channel), its clock at `start`.
 */
export function world(
  nodeIds: readonly string[],
  fleet: Partial<FleetOptions> = {},
  start: number = T0,
) {
  const clock = new ManualClock(start);
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
    fleet: {
      store: fleetStore,
      intervalMs: INTERVAL,
      onHalted: (id) => halted.push(id),
      ...fleet,
    },
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

/** A desired version of pool p at 2.0.0 (sequence 2), halting after 2 failures. */
export function desired(over: Partial<DesiredVersion> = {}): DesiredVersion {
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

/**
 * Inserts a finished campaign over `nodes` (their final states), created by `createdBy`,
 * ended `completed` unless `ending` says otherwise (and a retry of `ending.retryOf`).
 */
export async function finished(
  store: MemoryCampaignStore,
  id: string,
  createdBy: string,
  nodes: Record<string, NodeState>,
  spec = resolveSpec({
    targetVersion: "2.0.0",
    selector: { pools: ["p"] },
    batches: [{ percent: 100, minDurationMs: 0 }],
  }),
  ending: { readonly phase?: CampaignPhase; readonly retryOf?: string } = {},
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
    retryOf: ending.retryOf,
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
      campaign: { ...c.campaign, phase: ending.phase ?? "completed", finishedAt: T0 - 1000 },
      nodes: [],
      operations: [],
      appliedCommands: [],
      audits: [],
      now: new Date(T0 - 1000),
    }),
  );
}
