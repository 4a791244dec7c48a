/**
 * The operations of the engine scaling benchmark (`engine-scaling.ts`), each on a fresh world
 * of `engine-world.ts`: the same shell code Control runs (admission, `runDecision`,
 * `convergencePass`, `retryCampaign`) over the memory adapter, and the reads of `campaign why`
 * and the fleet summary as the admin services make them. What is measured is the engine's own
 * work in the size of the fleet.
 */
import { planOnly, retryCampaign } from "../../control/admin/campaign-start.js";
import { desiredMessageOf } from "../../control/admin/desired-service.js";
import {
  CONVERGENCE_CREATOR,
  type ConvergenceRun,
  type FleetNode,
  operationId,
  summarizeFleet,
  waitsFor,
} from "../../control/campaign/index.js";
import type { FleetRow } from "../../control/campaign-store/index.js";
import { convergencePass } from "../../control/campaign-worker/convergence.js";
import { runDecision } from "../../control/campaign-worker/decision.js";
import { WorkingCopies } from "../../control/campaign-worker/working-copy.js";
import {
  ACTOR,
  type EngineWorld,
  engineWorld,
  MIN,
  NEW,
  NOW,
  OLD,
  POLICY,
  type RegistryRow,
  seedCampaign,
  setDesired,
  upgraded,
} from "./engine-world.js";

/** The operations measured, in the table's order. */
export const ENGINE_OPERATIONS = [
  "plan",
  "decide at a batch boundary",
  "retry after a canary breach",
  "convergence pass",
  "campaign why (waits)",
  "fleet summary",
] as const;

/** One measured operation. */
export type EngineOperation = (typeof ENGINE_OPERATIONS)[number];

/** A prepared operation: `run` is what is timed (once per world). */
export interface Prepared {
  readonly world: EngineWorld;
  readonly run: () => Promise<unknown>;
}

/** Prepares `op` on a fresh world of `n` nodes (the seeding is not timed). */
export async function prepare(op: EngineOperation, n: number): Promise<Prepared> {
  const w = await engineWorld(n);
  return { world: w, run: await operation(w, op) };
}

async function operation(w: EngineWorld, op: EngineOperation): Promise<() => Promise<unknown>> {
  switch (op) {
    case "plan":
      // A mixed fleet: every tenth node on a platform the release carries no artifact for.
      for (const [k, id] of w.ids.entries()) {
        const row = w.store.tables.registry.get(id);
        if (k % 10 === 9 && row !== undefined) w.store.putNode({ ...row, platform: "linux-arm64" });
      }
      return () =>
        planOnly(w.start, {
          targetVersion: NEW,
          selector: { pools: ["prod"] },
          batches: [
            { percent: 1, minDurationMs: 0 },
            { percent: 100, minDurationMs: 0 },
          ],
        });
    case "decide at a batch boundary":
      return prepareBoundary(w);
    case "retry after a canary breach":
      // The canary failed and the breach canceled every other node: the retry lists them all.
      await seedCampaign(
        w,
        "c0",
        (node, index) =>
          index === 0
            ? { ...node, state: "failed", code: "apply_failed", finishedAt: NOW - 30 * MIN }
            : { ...node, state: "canceled", finishedAt: NOW - 30 * MIN },
        { phase: "rolled_back", finishedAt: NOW - 30 * MIN },
      );
      return () =>
        retryCampaign(w.start, {
          id: "c0",
          excludeNodeIds: [w.ids[0] as string],
          reason: "",
          actor: ACTOR,
        });
    case "convergence pass":
      setDesired(w);
      return () => converge(w);
    case "campaign why (waits)":
      return prepareWaits(w);
    case "fleet summary":
      setDesired(w);
      // A convergence pass first: the summary reads its campaigns as the runs.
      await converge(w);
      return () => fleetSummary(w);
  }
}

/** One convergence pass of the leader, in its own fenced transaction. */
function converge(w: EngineWorld) {
  return w.fleet.transaction((tx) =>
    convergencePass(
      {
        lease: w.lease,
        gateway: w.gateway,
        self: "bench",
        release: async (version) => w.store.tables.releases.get(version),
        rules: { policy: POLICY, maxVersion: undefined },
      },
      tx,
      w.clock.now(),
    ),
  );
}

/**
 * A campaign over every node in its second batch (10 %): batch 1 passed, 90 % of batch 2
 * upgraded and verifying past their grace, the other 10 % still deferring (each answered its
 * offer DEFERRED and waits for its retry time). The measured decision is the first of this
 * Control (its working copy loaded): it passes batch 2, carries the deferring nodes over to
 * batch 3, confirms the verifying ones and offers batch 3 up to its concurrency.
 */
async function prepareBoundary(w: EngineWorld): Promise<() => Promise<unknown>> {
  const first = Math.max(1, Math.floor(w.n / 100));
  const second = first + Math.max(1, Math.floor(w.n / 10));
  const deferring = (index: number) => index >= first && index < second && index % 10 === 0;
  await seedCampaign(w, "c1", (node, index) => {
    if (index < first) return upgraded(node);
    if (index >= second) return node;
    if (deferring(index)) {
      return {
        ...node,
        state: "waiting",
        upgradeOperationId: operationId("c1", node.nodeId, "upgrade"),
        offeredAt: NOW - 20 * MIN,
        deferredAt: NOW - 20 * MIN,
        deferRetryAt: NOW + 20 * MIN,
        deferrals: 1,
        message: "deferred: a maintenance job runs",
        stateChangedAt: NOW - 20 * MIN,
      };
    }
    w.store.putNode({
      ...(w.store.tables.registry.get(node.nodeId) as RegistryRow),
      agent_version: NEW,
      boot_id: "b1",
    });
    return {
      ...node,
      state: "verifying",
      previousVersion: OLD,
      version: NEW,
      upgradeOperationId: operationId("c1", node.nodeId, "upgrade"),
      offeredAt: NOW - 30 * MIN,
      offerBootId: "b0",
      backAt: NOW - 25 * MIN,
      backBootId: "b1",
      graceEndsAt: NOW - 25 * MIN,
      stateChangedAt: NOW - 25 * MIN,
    };
  });
  const stored = w.store.tables.campaigns.get("c1");
  if (stored === undefined) throw new Error("c1 not seeded");
  stored.campaign = {
    ...stored.campaign,
    currentBatch: 1,
    batches: stored.campaign.batches.map((b, k) =>
      k === 0
        ? { ...b, state: "passed", startedAt: NOW - 55 * MIN, endedAt: NOW - 31 * MIN }
        : k === 1
          ? { ...b, state: "running", startedAt: NOW - 31 * MIN }
          : b,
    ),
  };
  const deps = {
    store: w.store,
    lease: w.lease,
    gateway: w.gateway,
    clock: w.clock,
    release: async (version: string) => w.store.tables.releases.get(version),
    publicUrl: () => "http://control.bench",
    copies: new WorkingCopies(),
    liveness: { readyAt: NOW - 60 * MIN, offlineAfterMs: 2 * MIN, lastHeardMs: () => NOW },
    self: "bench",
  };
  return async () => {
    const out = await runDecision(deps, "c1");
    if (out.campaign?.currentBatch !== 2) {
      throw new Error(
        `the batch-boundary decision did not pass batch 2: ${out.decision?.reasons.slice(0, 5).join("; ")}`,
      );
    }
    return out;
  };
}

/**
 * A campaign in its second batch: its first batch upgraded, 1,000 of the second offered or
 * applying, the rest of it waiting. `campaign why` reads what the waits service reads.
 */
async function prepareWaits(w: EngineWorld): Promise<() => Promise<unknown>> {
  const first = Math.max(1, Math.floor(w.n / 100));
  await seedCampaign(w, "c1", (node, index) => {
    if (index < first) return upgraded(node);
    if (index < first + 1000)
      return {
        ...node,
        state: index % 2 === 0 ? "offered" : "applying",
        previousVersion: OLD,
        upgradeOperationId: operationId("c1", node.nodeId, "upgrade"),
        offeredAt: NOW - 5 * MIN,
        offerBootId: "b0",
        reconnectDeadline: NOW + 5 * MIN,
        stateChangedAt: NOW - 5 * MIN,
      };
    return node;
  });
  const stored = w.store.tables.campaigns.get("c1");
  if (stored === undefined) throw new Error("c1 not seeded");
  stored.campaign = {
    ...stored.campaign,
    currentBatch: 1,
    batches: stored.campaign.batches.map((b, k) =>
      k === 0
        ? { ...b, state: "passed", startedAt: NOW - 55 * MIN, endedAt: NOW - 30 * MIN }
        : k === 1
          ? { ...b, state: "running", startedAt: NOW - 30 * MIN }
          : b,
    ),
  };
  return () => campaignWhy(w, "c1");
}

/** What `CampaignWaitsService.getCampaignWaits` reads and judges, over the memory store. */
async function campaignWhy(w: EngineWorld, id: string) {
  const now = w.clock.now().getTime();
  return await w.store.transaction(async (tx) => {
    const row = await tx.readCampaign(id);
    if (row === undefined) throw new Error(`no campaign ${id}`);
    const campaign = row.campaign;
    const nodes = await tx.readNodes(id);
    const batch = nodes.filter((n) => n.batch === campaign.currentBatch);
    const waiting = batch.filter((n) => n.state === "waiting").map((n) => n.nodeId);
    const online = new Set(
      (await tx.readRegistry(waiting)).filter((r) => r.online === true).map((r) => r.id),
    );
    const pools = await tx.poolLoads([...new Set(batch.map((n) => n.pool))], id, now);
    const flying = new Set(
      nodes
        .filter((n) => n.state === "offered" || n.state === "applying")
        .flatMap((n) => (n.upgradeOperationId === undefined ? [] : [n.nodeId])),
    );
    const facts = await tx.readOperationFacts(id, [...flying]);
    const upgradePhases = new Map<string, "APPLYING">();
    for (const f of facts) if (f.report_phase === "APPLYING") upgradePhases.set(f.id, "APPLYING");
    return waitsFor({
      campaign,
      nodes,
      now,
      online: (nodeId) => online.has(nodeId),
      gates: await tx.readGateResults(id, campaign.currentBatch),
      pools,
      upgradePhases,
    });
  });
}

/** What `FleetService.getFleetSummary` reads and judges, over the memory store. */
async function fleetSummary(w: EngineWorld) {
  const read = await w.fleet.transaction(async (tx) => ({
    rows: await tx.readFleet(),
    desired: await tx.readDesired(),
    runs: await tx.campaignsCreatedBy(CONVERGENCE_CREATOR),
  }));
  const runs: ConvergenceRun[] = read.runs.map((c) => ({
    campaignId: c.id,
    desiredId: c.createdBy.slice(CONVERGENCE_CREATOR.length),
    createdAt: c.createdAt,
    finished: c.finishedAt !== undefined,
    failedNodeIds: c.failedNodeIds,
    phase: c.phase,
  }));
  const newest = [...read.desired].sort((a, b) => b.setAt - a.setAt || (a.id < b.id ? -1 : 1));
  const summary = summarizeFleet({
    fleet: read.rows.map(fleetNodeOf),
    desired: newest,
    runs,
    now: w.clock.now().getTime(),
  });
  const messages = summary.desired.map((c) => desiredMessageOf(c.desired, read.rows, read.desired));
  return { summary, messages };
}

/** A registry row as the pure rules read it (as the fleet service maps it). */
function fleetNodeOf(r: FleetRow): FleetNode {
  return {
    id: r.id,
    labels: r.labels,
    pool: r.pool,
    enabled: r.enabled,
    everConnected: r.everConnected,
    capabilities: r.capabilities,
    agentVersion: r.agentVersion || undefined,
    platform: r.platform || undefined,
    confirmedSequence: r.confirmedSequence,
    runningSequence: r.runningSequence,
    online: r.online,
    busy: r.busy,
  };
}
