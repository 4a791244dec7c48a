/**
 * A world for the campaign worker's unit tests: the memory campaign store, a fake gateway whose
 * streams a test opens and closes, and the manual clock (no database, no sockets, no wall time).
 */
import { create, fromBinary } from "@bufbuild/protobuf";
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
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../../control/campaign-worker/facts.js";
import type { GateProbe } from "../../../control/campaign-worker/gate-runner.js";
import type { WorkerObserver } from "../../../control/campaign-worker/observer.js";
import { createCampaignWorker } from "../../../control/campaign-worker/worker.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import {
  ObservedStateSchema,
  type OperationPhase,
  OperationSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

export const OLD = "1.0.0";
export const NEW = "2.0.0";
export const OFFLINE_AFTER = 60_000;

/** A gateway whose streams the test opens and closes; it records what was sent. */
export class FakeGateway implements WorkerGateway {
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

/** A worker world over `nodeIds` (registry rows on OLD), with their pools and a gate probe. */
export function world(
  nodeIds: string[],
  pool = (_: string) => "",
  gateProbe: GateProbe | undefined = undefined,
) {
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
  const worker = (holder = "w1", observer?: WorkerObserver) =>
    createCampaignWorker({
      store,
      gateway,
      clock,
      log: createLogger({ level: "silent" }),
      holder,
      intervalMs: 5000,
      publicUrl: () => "http://control",
      offlineAfterMs: OFFLINE_AFTER,
      ...(gateProbe === undefined ? {} : { gateProbe }),
      ...(observer === undefined ? {} : { observer }),
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
