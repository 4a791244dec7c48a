/**
 * One transaction of the memory campaign store: reads see the committed tables; writes are
 * checked at once (a stale campaign version throws, as the SQL update finds no row) and
 * applied together on {@link MemoryTransaction.commit}, so a transaction that throws changes
 * nothing.
 */
import { type CampaignNode, campaignFeatures } from "../../campaign/index.js";
import type { ReleaseYank } from "../offer-release.js";
import {
  type CampaignRow,
  type CampaignTransaction,
  CampaignVersionConflict,
  type DecisionWrite,
  type NewCampaign,
  type NodeRegistryRow,
  writesSomething,
} from "../port.js";
import type { CommandRow } from "../rows.js";
import type { MemoryTables } from "./memory-tables.js";

/** Structured copy of a plain record (engine records are JSON-shaped). */
function copy<T>(value: T): T {
  return structuredClone(value);
}

/** A transaction over {@link MemoryTables}; see the file's TSDoc. */
export class MemoryTransaction implements CampaignTransaction {
  private readonly writes: (() => void)[] = [];
  /** Ids of the campaigns this transaction inserts. */
  private readonly inserted = new Set<string>();

  constructor(
    private readonly t: MemoryTables,
    private readonly check: () => void,
  ) {}

  /** Stages a write of another table of the same store, applied on commit with the others. */
  stage(write: () => void): void {
    this.writes.push(write);
  }

  /** Applies the staged writes. */
  commit(): void {
    for (const w of this.writes) w();
  }

  async holdsLease(name: string, holder: string, epoch: number): Promise<boolean> {
    this.check();
    const row = this.t.leases.get(name);
    return row?.holder === holder && row.epoch === epoch;
  }

  async readCampaign(id: string): Promise<CampaignRow | undefined> {
    this.check();
    const c = this.t.campaigns.get(id);
    if (c === undefined) return undefined;
    return {
      campaign: copy(c.campaign),
      targetVersion: c.targetVersion,
      createdBy: c.createdBy,
      updatedAt: c.updatedAt,
      finishedAt: c.campaign.finishedAt === undefined ? undefined : new Date(c.campaign.finishedAt),
      version: c.version,
      features: [...(c.features ?? [])],
    };
  }

  async readNodes(campaignId: string): Promise<CampaignNode[]> {
    this.check();
    return copy(this.t.nodes.get(campaignId) ?? []);
  }

  async readRegistry(nodeIds: readonly string[]): Promise<NodeRegistryRow[]> {
    this.check();
    const out: NodeRegistryRow[] = [];
    // Each id once, as `where id = any(…)` reads it.
    for (const id of new Set(nodeIds)) {
      const row = this.t.registry.get(id);
      if (row === undefined) continue;
      const { pool: _pool, ...registry } = row;
      out.push(copy(registry));
    }
    return out;
  }

  async readOperationFacts(campaignId: string, nodeIds?: readonly string[]) {
    this.check();
    return this.t.operationFacts(campaignId, nodeIds);
  }

  async readConfigFailures(campaignId: string, nodeIds?: readonly string[]) {
    this.check();
    return this.t.configFailuresOf(campaignId, nodeIds);
  }

  async pendingCommands(campaignId: string): Promise<CommandRow[]> {
    this.check();
    return this.t.commands
      .filter((c) => c.campaignId === campaignId && c.appliedAt === null)
      .map(({ id, kind, rollback, gate, reason, actor, actor_ip }) => ({
        id,
        kind,
        rollback,
        gate: gate ?? null,
        reason,
        actor,
        actor_ip,
      }));
  }

  async poolLoads(pools: readonly string[], excludingCampaignId: string, now: number) {
    this.check();
    return this.t.poolLoads(pools, excludingCampaignId, now);
  }

  async writeDecision(w: DecisionWrite): Promise<boolean> {
    this.check();
    if (!writesSomething(w)) return false;
    const stored = this.t.campaigns.get(w.campaignId);
    if (stored === undefined || stored.version !== w.version) {
      throw new CampaignVersionConflict(
        `campaign ${w.campaignId} changed since version ${w.version}`,
      );
    }
    const t = this.t;
    const campaign = w.campaign === undefined ? undefined : copy(w.campaign);
    const nodes = copy(w.nodes);
    this.writes.push(() => {
      if (campaign !== undefined) stored.campaign = campaign;
      stored.version++;
      stored.updatedAt = w.now;
      const records = t.nodes.get(w.campaignId) ?? [];
      const at = new Map(records.map((n, i) => [n.nodeId, i]));
      for (const n of nodes) {
        const i = at.get(n.nodeId);
        if (i !== undefined) records[i] = n;
      }
      for (const o of w.operations) {
        const prior = t.operations.get(o.id);
        // An offer again to a node that deferred: the same operation, sent afresh.
        if (prior !== undefined && prior.report?.phase !== "DEFERRED") continue;
        t.operations.set(o.id, {
          id: o.id,
          campaignId: o.campaignId,
          nodeId: o.nodeId,
          kind: o.kind,
          payload: o.payload,
          createdAt: w.now.getTime(),
          seq: t.nextSeq(),
          failedAt: o.failure === undefined ? null : w.now,
          failure: o.failure ?? null,
          ackedAt: null,
          report: null,
          lastSentAt: null,
          sendCount: 0,
        });
      }
      for (const applied of w.appliedCommands) {
        const c = t.commands.find((x) => x.id === applied.id);
        if (c === undefined) continue;
        c.appliedAt = w.now;
        c.outcome = applied.outcome;
      }
      for (const a of w.audits) t.audits.push({ ...a, time: w.now });
    });
    return true;
  }

  async readGateResults(campaignId: string, batch: number) {
    this.check();
    return this.t.gateResults.read(campaignId, batch);
  }

  async readYanks(versions: readonly string[]) {
    this.check();
    const out = new Map<string, ReleaseYank>();
    for (const v of versions) {
      const yank = this.t.yanks.get(v);
      if (yank !== undefined) out.set(v, copy(yank));
    }
    return out;
  }

  async insertCampaign(input: NewCampaign): Promise<void> {
    this.check();
    const c = copy(input.campaign);
    // The primary key: a campaign id is inserted once (this transaction's inserts included).
    if (this.t.campaigns.has(c.id) || this.inserted.has(c.id)) {
      throw new Error(`campaign ${c.id} already exists`);
    }
    this.inserted.add(c.id);
    const nodes = copy([...input.nodes]).sort((a, b) => a.order - b.order);
    this.writes.push(() => {
      this.t.campaigns.set(c.id, {
        campaign: c,
        targetVersion: c.spec.targetVersion,
        createdBy: input.createdBy,
        createdAt: input.now.getTime(),
        updatedAt: input.now,
        version: 1,
        features: [...(input.features ?? campaignFeatures(c.spec))],
      });
      this.t.nodes.set(c.id, nodes);
    });
  }
}
