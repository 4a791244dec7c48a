/**
 * The memory adapter of the {@link FleetStore} port, over a {@link MemoryCampaignStore}: its
 * transactions are the campaign store's (one at a time, failing in an outage), and their
 * writes apply on commit together with the campaign writes of the same transaction.
 */
import {
  type DesiredVersion,
  FIXED_ORDER_SECRET,
  holdsNodeBusy,
  type RolloutPlan,
} from "../../campaign/index.js";
import {
  type CampaignSummary,
  FAILED_NODE_STATES,
  type FleetRow,
  type FleetStore,
  type FleetTransaction,
  type PlanRow,
  PlanVersionConflict,
} from "../fleet-port.js";
import { memoryAdminNodes } from "./memory-admin-nodes.js";
import type { MemoryCampaignStore } from "./memory-store.js";
import type { MemoryCampaign } from "./memory-tables.js";
import type { MemoryTransaction } from "./memory-transaction.js";

/** The fleet tables of the memory store. */
export class MemoryFleetTables {
  readonly desired = new Map<string, DesiredVersion>();
  readonly plans = new Map<string, { plan: RolloutPlan; version: number }>();
  /** Completed campaigns recorded as desired versions. */
  readonly recorded = new Set<string>();
}

function copy<T>(value: T): T {
  return structuredClone(value);
}

/** A fleet store held in memory beside a memory campaign store. */
export class MemoryFleetStore implements FleetStore {
  readonly tables = new MemoryFleetTables();

  constructor(private readonly store: MemoryCampaignStore) {}

  transaction<T>(work: (tx: FleetTransaction) => Promise<T>): Promise<T> {
    return this.store.transaction((ctx) => work(this.fleetTransaction(ctx as MemoryTransaction)));
  }

  private summaryOf(c: MemoryCampaign): CampaignSummary {
    const nodes = this.store.tables.nodes.get(c.campaign.id) ?? [];
    return {
      id: c.campaign.id,
      createdBy: c.createdBy,
      phase: c.campaign.phase,
      createdAt: c.createdAt,
      finishedAt: c.campaign.finishedAt,
      failedNodeIds: nodes
        .filter((n) => FAILED_NODE_STATES.includes(n.state))
        .map((n) => n.nodeId)
        .sort(),
    };
  }

  private byCreation(): MemoryCampaign[] {
    return [...this.store.tables.campaigns.values()].sort(
      (a, b) => a.createdAt - b.createdAt || (a.campaign.id < b.campaign.id ? -1 : 1),
    );
  }

  /** Node id → the oldest unfinished campaign that still counts it (see `busyNodes`). */
  private busyIds(): Map<string, string> {
    const busy = new Map<string, string>();
    const byAge = [...this.store.tables.campaigns].sort(
      ([a, x], [b, y]) => x.campaign.createdAt - y.campaign.createdAt || (a < b ? -1 : 1),
    );
    for (const [id, c] of byAge) {
      for (const n of this.store.tables.nodes.get(id) ?? []) {
        if (holdsNodeBusy(c.campaign, n) && !busy.has(n.nodeId)) busy.set(n.nodeId, id);
      }
    }
    return busy;
  }

  private fleetTransaction(ctx: MemoryTransaction): FleetTransaction {
    const t = this.tables;
    const ct = this.store.tables;
    return {
      campaigns: ctx,
      nodes: memoryAdminNodes(this.store, ctx),
      async lockStarts() {
        // Transactions of the memory store run one at a time.
      },
      readFleet: async (): Promise<FleetRow[]> => {
        const busy = this.busyIds();
        return [...ct.registry.values()]
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((r) => ({
            id: r.id,
            labels: { ...(r.labels ?? {}) },
            pool: r.pool,
            enabled: r.enabled,
            everConnected: r.last_seen !== null,
            capabilities: [...r.capabilities],
            agentVersion: r.agent_version,
            platform: r.platform,
            confirmedSequence: r.confirmed_sequence ?? 0,
            runningSequence: ct.releases.get(r.agent_version)?.sequence,
            online: r.online === true,
            heldBy: r.held_by ?? null,
            busy: busy.has(r.id),
            busyIn: busy.get(r.id),
          }));
      },
      async readOrderSecret() {
        return FIXED_ORDER_SECRET;
      },
      async readDesired() {
        return [...t.desired.values()]
          .sort((a, b) => a.setAt - b.setAt || (a.id < b.id ? -1 : 1))
          .map(copy);
      },
      async writeDesired(d) {
        const value = copy(d);
        ctx.stage(() => t.desired.set(value.id, value));
      },
      async deleteDesired(id) {
        const had = t.desired.has(id);
        ctx.stage(() => t.desired.delete(id));
        return had;
      },
      completionsToRecord: async () =>
        [...ct.campaigns.values()]
          .filter(
            (c) =>
              c.campaign.phase === "completed" &&
              c.campaign.finishedAt !== undefined &&
              !t.recorded.has(c.campaign.id),
          )
          .sort(
            (a, b) =>
              (a.campaign.finishedAt ?? 0) - (b.campaign.finishedAt ?? 0) ||
              (a.campaign.id < b.campaign.id ? -1 : 1),
          )
          .map((c) => ({
            id: c.campaign.id,
            createdBy: c.createdBy,
            finishedAt: c.campaign.finishedAt as number,
          })),
      async markRecorded(ids) {
        ctx.stage(() => {
          for (const id of ids) t.recorded.add(id);
        });
      },
      campaignsCreatedBy: async (prefix) =>
        this.byCreation()
          .filter((c) => c.createdBy.startsWith(prefix))
          .map((c) => this.summaryOf(c)),
      campaignSummaries: async (ids) => {
        const wanted = new Set(ids);
        return this.byCreation()
          .filter((c) => wanted.has(c.campaign.id))
          .map((c) => this.summaryOf(c));
      },
      async readPlans(live) {
        return [...t.plans.values()]
          .filter((p) => !live || p.plan.phase === "running")
          .sort((a, b) => b.plan.createdAt - a.plan.createdAt || (a.plan.id < b.plan.id ? 1 : -1))
          .map(copy);
      },
      async readPlan(id): Promise<PlanRow | undefined> {
        const p = t.plans.get(id);
        return p === undefined ? undefined : copy(p);
      },
      async insertPlan(plan) {
        if (t.plans.has(plan.id)) throw new Error(`plan ${plan.id} already exists`);
        const value = copy(plan);
        ctx.stage(() => t.plans.set(value.id, { plan: value, version: 1 }));
      },
      async writePlan(plan, version) {
        const current = t.plans.get(plan.id);
        if (current === undefined || current.version !== version)
          throw new PlanVersionConflict(`plan ${plan.id} changed since version ${version}`);
        const value = copy(plan);
        ctx.stage(() => t.plans.set(value.id, { plan: value, version: version + 1 }));
      },
      async insertAudits(rows, now) {
        const copied = rows.map((r) => ({ ...r, time: now }));
        ctx.stage(() => {
          for (const a of copied) ct.audits.push(a);
        });
      },
      async insertCommand(c) {
        const id = ct.reserveCommandId();
        ctx.stage(() =>
          ct.pushCommand({
            id,
            campaignId: c.campaignId,
            kind: c.kind,
            rollback: c.rollback,
            gate: c.gate ?? null,
            reason: c.reason,
            actor: c.actor,
            actor_ip: c.actorIp,
          }),
        );
        return id;
      },
    };
  }
}
