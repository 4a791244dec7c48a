/**
 * The world of the engine scaling benchmark (`engine-operations.ts`, `engine-scaling.ts`): a
 * fleet of N nodes in the memory campaign store, with a held lease, the releases, and the
 * campaigns and desired versions each measured operation starts from. No database, no
 * sockets, no wall time.
 */
import type { StartDeps } from "../../control/admin/campaign-start.js";
import type { ConnectedNode } from "../../control/agents/events.js";
import {
  type CampaignNode,
  createCampaign,
  DEFAULT_POLICY,
  type DesiredVersion,
  desiredIdOf,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import {
  type LeaderLease,
  MemoryCampaignStore,
  MemoryFleetStore,
} from "../../control/campaign-store/index.js";
import type { WorkerGateway } from "../../control/campaign-worker/facts.js";
import { admissionRelease } from "../../control/campaign-worker/system-start.js";
import { ManualClock } from "../../control/manual-clock.js";

export const OLD = "1.0.0";
export const NEW = "2.0.0";
const PLATFORM = "linux-amd64";
export const MIN = 60_000;
/** The worlds' clock starts here (epoch ms); campaigns were created an hour earlier. */
export const NOW = Date.UTC(2026, 0, 5, 12);
export const POLICY = { ...DEFAULT_POLICY, minBatchDurationMs: 0, firstBatchMaxPercent: 100 };
export const ACTOR = { name: "bench", ip: "127.0.0.1" };

/** The node id of index `i` (sorted ids sort as the indexes do). */
export function nodeIdOf(i: number): string {
  return `node-${String(i).padStart(7, "0")}`;
}

/** A gateway on which every node has a live stream, running its registry row's version. */
class AllConnected implements WorkerGateway {
  constructor(private readonly store: MemoryCampaignStore) {}
  send(): boolean {
    return true;
  }
  connected(nodeId: string): ConnectedNode {
    return {
      nodeId,
      sessionId: `${nodeId}-${this.row(nodeId)?.boot_id ?? "b0"}`,
      bootId: this.row(nodeId)?.boot_id ?? "b0",
      agentVersion: this.row(nodeId)?.agent_version ?? OLD,
      previousVersion: "",
      platform: PLATFORM,
      pool: "prod",
      labels: {},
      capabilities: ["upgrade.v1", "config.v1"],
      confirmedSequence: 1,
      connectedAt: new Date(NOW - 60 * MIN),
    };
  }
  subscribe(): () => void {
    return () => {};
  }
  private row(nodeId: string): RegistryRow | undefined {
    return this.store.tables.registry.get(nodeId);
  }
}

export type RegistryRow = Parameters<MemoryCampaignStore["putNode"]>[0];

/** A fleet of `n` nodes in the memory store, with the releases and a held lease. */
export interface EngineWorld {
  readonly n: number;
  readonly clock: ManualClock;
  readonly store: MemoryCampaignStore;
  readonly fleet: MemoryFleetStore;
  readonly gateway: WorkerGateway;
  readonly lease: LeaderLease;
  readonly start: StartDeps;
  readonly ids: readonly string[];
}

/** Builds a world of `n` enabled, online nodes of pool prod running `OLD`. */
export async function engineWorld(n: number): Promise<EngineWorld> {
  const clock = new ManualClock(NOW);
  const store = new MemoryCampaignStore(clock);
  const fleet = new MemoryFleetStore(store);
  const ids = Array.from({ length: n }, (_, i) => nodeIdOf(i));
  for (const id of ids) {
    store.putNode({
      id,
      boot_id: "b0",
      agent_version: OLD,
      capabilities: ["upgrade.v1", "config.v1"],
      platform: PLATFORM,
      enabled: true,
      last_seen: new Date(NOW - MIN),
      online: true,
      held_by: "bench",
      pool: "prod",
      labels: { zone: `z${i(id) % 4}` },
      confirmed_sequence: 1,
    });
  }
  const envelope = {
    payloadType: "application/vnd.agentcontrol.manifest+json",
    payload: new Uint8Array(),
    signatures: [],
  };
  const artifacts = [{ platform: PLATFORM, sha256: "0".repeat(64), size: 1, url: "" }];
  const expiresAt = NOW + 365 * 24 * 60 * MIN;
  store.tables.releases.set(OLD, { version: OLD, sequence: 1, envelope, artifacts, expiresAt });
  store.tables.releases.set(NEW, { version: NEW, sequence: 2, envelope, artifacts, expiresAt });
  const lease = store.lease({ holder: "bench", name: "campaign-worker", ttlMs: 60 * MIN });
  if (!(await lease.tick())) throw new Error("the bench world could not take its lease");
  const start: StartDeps = {
    fleet,
    release: async (version) => {
      const r = store.tables.releases.get(version);
      return r === undefined ? undefined : admissionRelease(r);
    },
    clock,
    policy: POLICY,
    maxVersion: undefined,
  };
  return { n, clock, store, fleet, gateway: new AllConnected(store), lease, start, ids };
}

/** The index in a node id made by {@link nodeIdOf}. */
function i(id: string): number {
  return Number(id.slice(5));
}

/**
 * Inserts campaign `id` over every node of `w` (batches of 1 %, 10 % and the rest, created an
 * hour ago), each node's record as `shape` returns it (`node` as created, and its index).
 */
export async function seedCampaign(
  w: EngineWorld,
  id: string,
  shape: (node: CampaignNode, index: number) => CampaignNode,
  phase?: { phase: "rolled_back"; finishedAt: number },
): Promise<void> {
  const spec = resolveSpec(
    {
      targetVersion: NEW,
      selector: { pools: ["prod"] },
      batches: [
        { percent: 1, minDurationMs: 0 },
        { percent: 10, minDurationMs: 0 },
        { percent: 100, minDurationMs: 0 },
      ],
      concurrency: 1000,
      disruptionBudgetPercent: 100,
      reconnectTimeoutMs: 10 * MIN,
      configGraceMs: 0,
    },
    POLICY,
  );
  const candidates = w.ids.map((nodeId) => ({
    id: nodeId,
    labels: {},
    pool: "prod",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1", "config.v1"],
    agentVersion: OLD,
    confirmedSequence: 1,
  }));
  const created = createCampaign({
    id,
    spec,
    plan: planCampaign(spec, candidates),
    target: { version: NEW, sequence: 2 },
    now: NOW - 60 * MIN,
  });
  const campaign = phase === undefined ? created.campaign : { ...created.campaign, ...phase };
  await w.store.transaction((tx) =>
    tx.insertCampaign({
      campaign,
      nodes: created.nodes.map(shape),
      createdBy: "bench",
      createdByIp: "127.0.0.1",
      now: new Date(NOW - 60 * MIN),
    }),
  );
}

export const upgraded = (node: CampaignNode): CampaignNode => ({
  ...node,
  state: "succeeded",
  previousVersion: OLD,
  version: NEW,
  upgradeOperationId: operationId("c1", node.nodeId, "upgrade"),
  offeredAt: NOW - 50 * MIN,
  stateChangedAt: NOW - 40 * MIN,
  finishedAt: NOW - 40 * MIN,
});

/**
 * Two desired versions: `NEW` for pool prod, and (set later, so it governs them) `NEW` for an
 * explicit list of half the nodes, as a retry's recorded selection lists them.
 */
export function setDesired(w: EngineWorld): void {
  const exclude = { nodeIds: [], tags: {} };
  const of = (selector: DesiredVersion["selector"], setAt: number): DesiredVersion => ({
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: { version: NEW, sequence: 2 },
    setAt,
    setBy: "bench",
    settings: {
      reconnectTimeoutMs: 10 * MIN,
      configGraceMs: 0,
      disruptionBudgetPercent: 5,
      maxFailures: 3,
    },
    haltedAt: undefined,
    haltedReason: undefined,
  });
  const pool = of({ labels: {}, pools: ["prod"], nodeIds: [] }, NOW - 20 * MIN);
  const listed = of(
    { labels: {}, pools: [], nodeIds: w.ids.filter((_, k) => k % 2 === 0) },
    NOW - 10 * MIN,
  );
  w.fleet.tables.desired.set(pool.id, pool);
  w.fleet.tables.desired.set(listed.id, listed);
}
