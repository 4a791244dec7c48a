/**
 * The tables of the memory campaign store, with the queries both its transactions and its
 * direct calls run. Records are kept as the SQL adapter stores them (engine records whole,
 * rows with their column names) and handed out as copies, so a caller never mutates a table.
 */
import {
  admitLateRollbacks,
  type CampaignNode,
  type CampaignState,
  inFlight,
  isFinal,
  type LateRollbackCandidate,
  lateRollbackHoldsSlot,
  lateRollbackWanted,
  type PoolHeld,
  type PoolLoad,
  worthResending,
} from "../../campaign/index.js";
import type { OfferRelease, ReleaseYank } from "../offer-release.js";
import type {
  AuditRow,
  ConfigFailureWrite,
  NodeRegistryRow,
  Outgoing,
  ReportWrite,
  ResendFilter,
} from "../port.js";
import { replacesReport } from "../report-order.js";
import type { CommandRow, ConfigFailureRow, OperationFactRow } from "../rows.js";
import { MemoryGateResults } from "./memory-gates.js";

/** A campaign as stored. */
export interface MemoryCampaign {
  campaign: CampaignState;
  targetVersion: string;
  createdBy: string;
  createdAt: number;
  updatedAt: Date;
  version: number;
  /** `campaigns.engine_features` in SQL (absent: none). */
  features?: readonly string[];
}

/** An outbox row as stored. */
export interface MemoryOperation {
  readonly id: string;
  readonly campaignId: string;
  readonly nodeId: string;
  readonly kind: string;
  readonly payload: Uint8Array | null;
  readonly createdAt: number;
  /** Insertion order, the tie-break of `createdAt`. */
  readonly seq: number;
  readonly failedAt: Date | null;
  readonly failure: string | null;
  ackedAt: Date | null;
  report: {
    phase: string;
    code: string;
    message: string;
    version: string;
    at: Date;
    bootId: string | null;
    /** Its number in the store's one order of reports (`campaign_report_seq` in SQL). */
    seq: number;
  } | null;
  lastSentAt: Date | null;
  sendCount: number;
  /**
   * When it was last delivered as a late rollback (`late_sent_at` in SQL; absent or null:
   * never): it holds a slot of its pool's budget from then (`late-rollback.ts`).
   */
  lateSentAt?: Date | null;
}

/** A command as stored. */
export interface MemoryCommand extends CommandRow {
  readonly campaignId: string;
  appliedAt: Date | null;
  outcome: string | null;
}

/** A lease row. */
export interface MemoryLease {
  holder: string;
  epoch: number;
  expiresAt: number;
}

/** A registry row as stored: the port's, plus the pool, labels and confirmed sequence. */
export type MemoryRegistryRow = NodeRegistryRow & {
  pool: string;
  labels?: Record<string, string>;
  confirmed_sequence?: number;
  /** Why an administrator disabled it (absent: ""). */
  disabled_reason?: string;
  /** When an administrator last reset it, until it enrolls again (absent: never). */
  reset_at?: Date | null;
  /** When an administrator command last changed it (absent: never). */
  updated_at?: Date;
};

/** Every table of the memory store. */
export class MemoryTables {
  readonly campaigns = new Map<string, MemoryCampaign>();
  /** Node records per campaign, in canary order. */
  readonly nodes = new Map<string, CampaignNode[]>();
  readonly operations = new Map<string, MemoryOperation>();
  readonly configFailures: (ConfigFailureRow & { campaign_id: string })[] = [];
  readonly commands: MemoryCommand[] = [];
  readonly audits: (AuditRow & { time: Date })[] = [];
  readonly registry = new Map<string, MemoryRegistryRow>();
  readonly releases = new Map<string, OfferRelease>();
  /** Yanked releases by version (`releases.yanked_at` in SQL). */
  readonly yanks = new Map<string, ReleaseYank>();
  readonly leases = new Map<string, MemoryLease>();
  /** Outside health gate results (see `memory-gates.ts`). */
  readonly gateResults = new MemoryGateResults();
  /** The outbox rows ever delivered as late rollbacks (`late_sent_at` set). */
  private readonly lateSent = new Set<string>();
  private seq = 0;
  private commandSeq = 0;
  /** The last number of the one order of reports (`campaign_report_seq` in SQL). */
  private reportSeq = 0;
  /**
   * Position of each node id in a campaign's records, per records array: a decision replaces
   * records in place (same positions) and an insert sets a new array, so an index built once
   * per array stays right.
   */
  private readonly positions = new WeakMap<CampaignNode[], Map<string, number>>();

  /** The next insertion sequence number. */
  nextSeq(): number {
    return ++this.seq;
  }

  /** Records an administrator command (as the admin API does). */
  addCommand(row: Omit<MemoryCommand, "id" | "appliedAt" | "outcome">): string {
    const id = this.reserveCommandId();
    this.pushCommand({ ...row, id });
    return id;
  }

  /** The id the next command will have (never given twice). */
  reserveCommandId(): string {
    return String(++this.commandSeq);
  }

  /** Records a command under an id from {@link reserveCommandId}, unapplied. */
  pushCommand(row: Omit<MemoryCommand, "appliedAt" | "outcome">): void {
    this.commands.push({ ...row, appliedAt: null, outcome: null });
  }

  liveCampaignIds(): string[] {
    return [...this.campaigns.values()]
      .filter((c) => c.campaign.finishedAt === undefined)
      .sort((a, b) => a.createdAt - b.createdAt || cmp(a.campaign.id, b.campaign.id))
      .map((c) => c.campaign.id);
  }

  liveCampaignOfNodes(nodeIds: readonly string[]): Map<string, string> {
    const wanted = new Set(nodeIds);
    const out = new Map<string, string>();
    const newestFirst = [...this.campaigns.values()]
      .filter((c) => c.campaign.finishedAt === undefined)
      .sort((a, b) => b.createdAt - a.createdAt || cmp(b.campaign.id, a.campaign.id));
    for (const c of newestFirst) {
      for (const n of this.nodes.get(c.campaign.id) ?? []) {
        if (wanted.has(n.nodeId) && !out.has(n.nodeId)) out.set(n.nodeId, c.campaign.id);
      }
    }
    return out;
  }

  /** Campaign `campaignId`'s record of node `nodeId`, found by id (never a scan of its nodes). */
  nodeOf(campaignId: string, nodeId: string): CampaignNode | undefined {
    const records = this.nodes.get(campaignId);
    if (records === undefined) return undefined;
    let at = this.positions.get(records);
    if (at === undefined) {
      at = new Map();
      for (const [k, n] of records.entries()) at.set(n.nodeId, k);
      this.positions.set(records, at);
    }
    const k = at.get(nodeId);
    return k === undefined ? undefined : records[k];
  }

  openNodeIds(campaignId: string): string[] {
    return (this.nodes.get(campaignId) ?? []).filter((n) => !isFinal(n.state)).map((n) => n.nodeId);
  }

  operationFacts(campaignId: string, nodeIds?: readonly string[]): OperationFactRow[] {
    const only = nodeIds === undefined ? undefined : new Set(nodeIds);
    const out: OperationFactRow[] = [];
    for (const o of this.operations.values()) {
      if (o.campaignId !== campaignId || (only && !only.has(o.nodeId))) continue;
      if (o.report === null && o.failedAt === null) continue;
      out.push({
        id: o.id,
        node_id: o.nodeId,
        report_phase: o.report?.phase ?? null,
        report_code: o.report?.code ?? null,
        report_message: o.report?.message ?? null,
        report_version: o.report?.version ?? null,
        report_at: o.report?.at ?? null,
        report_boot_id: o.report?.bootId ?? null,
        report_seq: o.report?.seq ?? null,
        failed_at: o.failedAt,
        failure: o.failure,
      });
    }
    return out;
  }

  configFailuresOf(campaignId: string, nodeIds?: readonly string[]): ConfigFailureRow[] {
    const only = nodeIds === undefined ? undefined : new Set(nodeIds);
    return this.configFailures
      .filter((f) => f.campaign_id === campaignId && (!only || only.has(f.node_id)))
      .map(({ node_id, at, boot_id, message }) => ({ node_id, at, boot_id, message }));
  }

  poolLoads(pools: readonly string[], excluding: string, now: number): Map<string, PoolLoad> {
    const wanted = new Set(pools);
    const out = new Map<string, PoolLoad>();
    for (const pool of pools) out.set(pool, { size: 0, inFlightElsewhere: 0 });
    for (const row of this.registry.values()) {
      const load = out.get(row.pool);
      if (load && row.enabled) out.set(row.pool, { ...load, size: load.size + 1 });
    }
    for (const [campaignId, nodes] of this.nodes) {
      const c = this.campaigns.get(campaignId);
      if (campaignId === excluding || c === undefined || c.campaign.finishedAt !== undefined)
        continue;
      for (const n of nodes) {
        if (!wanted.has(n.pool) || !inFlight(n, now)) continue;
        const load = out.get(n.pool) as PoolLoad;
        out.set(n.pool, { ...load, inFlightElsewhere: load.inFlightElsewhere + 1 });
      }
    }
    // Late rollbacks delivered and not done with: a finished campaign's, never the excluded one.
    for (const id of this.lateSent) {
      const row = this.lateRow(id);
      if (row === undefined || !wanted.has(row.pool) || !lateRollbackHoldsSlot(row, now)) continue;
      const load = out.get(row.pool) as PoolLoad;
      out.set(row.pool, { ...load, inFlightElsewhere: load.inFlightElsewhere + 1 });
    }
    return out;
  }

  /** The late-rollback row of outbox row `id` (a finished campaign's rollback), else undefined. */
  private lateRow(id: string): LateRollbackCandidate | undefined {
    const o = this.operations.get(id);
    if (o === undefined || o.kind !== "rollback") return undefined;
    const campaign = this.campaigns.get(o.campaignId)?.campaign;
    if (campaign?.finishedAt === undefined) return undefined;
    const node = this.nodeOf(o.campaignId, o.nodeId);
    if (node === undefined) return undefined;
    return {
      operationId: o.id,
      nodeId: o.nodeId,
      pool: node.pool,
      deliveredAt: o.lateSentAt?.getTime(),
      reportPhase: o.report?.phase,
      reportAt: o.report?.at.getTime(),
      nodeVersion: this.registry.get(o.nodeId)?.agent_version,
      previousVersion: node.previousVersion,
      reconnectTimeoutMs: campaign.spec.reconnectTimeoutMs,
      budgetPercent: campaign.spec.disruptionBudgetPercent,
    };
  }

  /**
   * Admits the late rollbacks among `ids` at `now` (`admitLateRollbacks`, every pool's slots
   * counted as `poolLoads` counts them) and stamps each one that takes a new slot admitted at
   * `now`.
   * @returns the ids to deliver now.
   */
  admitLate(ids: readonly string[], now: number): ReadonlySet<string> {
    const candidates = ids.flatMap((id) => {
      const row = this.lateRow(id);
      return row === undefined ? [] : [row];
    });
    const pools = [...new Set(candidates.map((c) => c.pool))];
    const held = new Map<string, PoolHeld>();
    for (const [pool, load] of this.poolLoads(pools, "", now))
      held.set(pool, { size: load.size, held: load.inFlightElsewhere });
    const { deliver, admitted } = admitLateRollbacks(candidates, held, now);
    for (const id of admitted) {
      const o = this.operations.get(id) as MemoryOperation;
      o.lateSentAt = new Date(now);
      this.lateSent.add(id);
    }
    return deliver;
  }

  recordFacts(reports: readonly ReportWrite[], failures: readonly ConfigFailureWrite[]): void {
    for (const r of reports) {
      const o = this.operations.get(r.id);
      if (o === undefined || o.nodeId !== r.nodeId) continue;
      if (!replacesReport(o.report?.phase ?? null, r.phase)) continue;
      o.report = {
        phase: r.phase,
        code: r.code,
        message: r.message,
        version: r.version,
        at: r.at,
        bootId: r.bootId,
        seq: ++this.reportSeq,
      };
      o.ackedAt ??= r.at;
      if (o.kind === "confirm" && r.phase === "CONFIRMED") this.confirmed(o);
    }
    for (const f of failures) {
      if (!this.campaigns.has(f.campaignId)) continue;
      this.configFailures.push({
        campaign_id: f.campaignId,
        node_id: f.nodeId,
        at: f.at,
        boot_id: f.bootId,
        message: f.message,
      });
    }
  }

  /** The node confirmed the release of confirm operation `o`: its row's sequence rises to it. */
  private confirmed(o: MemoryOperation): void {
    const sequence = this.campaigns.get(o.campaignId)?.campaign.targetSequence;
    const row = this.registry.get(o.nodeId);
    if (sequence === undefined || row === undefined) return;
    if ((row.confirmed_sequence ?? 0) < sequence) {
      this.registry.set(o.nodeId, { ...row, confirmed_sequence: sequence });
    }
  }

  /**
   * The unacknowledged rows worth (re-)sending at `filter.now` (`worthResending`), oldest first,
   * and among them the late rollbacks (a finished campaign's), which go only once admitted
   * ({@link admitLate}); without `filter.nodeIds` none is listed (only the Control holding a
   * node's stream admits its late rollback, as it sends it at once).
   */
  unacked(filter: ResendFilter): { readonly rows: Outgoing[]; readonly late: string[] } {
    if (filter.nodeIds !== undefined && filter.nodeIds.length === 0) return { rows: [], late: [] };
    const only = filter.nodeIds === undefined ? undefined : new Set(filter.nodeIds);
    const now = filter.now.getTime();
    const out: MemoryOperation[] = [];
    for (const o of this.operations.values()) {
      if (o.ackedAt !== null || o.failedAt !== null || o.payload === null) continue;
      if (only && !only.has(o.nodeId)) continue;
      if (filter.sentBefore && o.lastSentAt !== null && o.lastSentAt >= filter.sentBefore) continue;
      const campaign = this.campaigns.get(o.campaignId)?.campaign;
      const node = this.nodeOf(o.campaignId, o.nodeId);
      if (campaign === undefined || node === undefined) continue;
      const release = o.kind === "rollback" ? node.previousVersion : campaign.spec.targetVersion;
      const worth = worthResending(
        {
          kind: o.kind,
          nodeState: node.state,
          phase: campaign.phase,
          windows: campaign.spec.windows,
          releaseYanked: release !== undefined && this.yanks.has(release),
          nodeInLaterCampaign:
            o.kind === "rollback" && this.inLaterCampaign(o.nodeId, o.campaignId),
          nodeDisabled: this.registry.get(o.nodeId)?.enabled === false,
          campaignFinished: campaign.finishedAt !== undefined,
          nodeOnTarget: lateRollbackWanted(
            this.registry.get(o.nodeId)?.agent_version,
            campaign.spec.targetVersion,
          ),
        },
        now,
      );
      if (!worth) continue;
      const late = o.kind === "rollback" && campaign.finishedAt !== undefined;
      if (late && only === undefined) continue;
      out.push(o);
    }
    out.sort((a, b) => a.createdAt - b.createdAt || cmp(a.id, b.id));
    return {
      rows: out.map((o) => ({
        nodeId: o.nodeId,
        operation: { id: o.id, bytes: o.payload as Uint8Array },
      })),
      late: out
        .filter(
          (o) =>
            o.kind === "rollback" &&
            this.campaigns.get(o.campaignId)?.campaign.finishedAt !== undefined,
        )
        .map((o) => o.id),
    };
  }

  /** True when `nodeId` belongs to a campaign created after `campaignId`. */
  private inLaterCampaign(nodeId: string, campaignId: string): boolean {
    const since = this.campaigns.get(campaignId)?.createdAt ?? Number.POSITIVE_INFINITY;
    for (const [id, c] of this.campaigns) {
      if (id === campaignId || c.createdAt <= since) continue;
      if (this.nodeOf(id, nodeId) !== undefined) return true;
    }
    return false;
  }

  markSent(ids: readonly string[], at: Date): void {
    for (const id of ids) {
      const o = this.operations.get(id);
      if (o === undefined) continue;
      o.lastSentAt = at;
      o.sendCount++;
    }
  }
}

/** Byte-order comparison, as PostgreSQL's "C" collation of ids. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
