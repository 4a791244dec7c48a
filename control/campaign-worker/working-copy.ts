/**
 * The leader's working copy of each campaign it decides, so a decision costs what changed
 * rather than what the campaign holds: the node records, the registry rows of its open nodes
 * and the persisted facts (reports, send failures, config failures) of each node.
 *
 * The database stays the truth. A copy is valid only for the campaign row `version` it was
 * read or written at: a decision that finds another version (another writer, a takeover)
 * reloads the copy whole. Facts written after the copy was read (the intake's reports and
 * config failures, a decision's send failures) mark their node stale, and the next decision
 * re-reads the facts of just those nodes. A node's registry row changes with its Hello and its
 * stream's end: a Hello here is taken from the hub ({@link WorkingCopies.noteHello}); a row
 * another Control wrote (a Hello or stream end there, a sweep of a dead Control's nodes) is
 * announced by a notification, which marks the row for re-reading
 * ({@link WorkingCopies.markRegistryStale}).
 *
 * Facts another Control wrote (its intake records the reports of the agents connected to it)
 * are announced the same way and mark their nodes stale. As a backstop for a lost
 * notification, every {@link REFRESH_MS} a decision re-reads the facts and registry rows of
 * the campaign's active nodes.
 *
 * A copy also keeps the last committed decision's judged mark and every node whose facts may
 * have changed since that decision read them (a Hello here, a registry row or persisted facts
 * re-read and found different), so the next decision judges only those, and the nodes whose
 * deadlines passed (`DecideInput.judgedSince`). A load starts without a mark: every node.
 */
import type { ConnectedNode } from "../agents/events.js";
import {
  awaitsRollback,
  type CampaignNode,
  type DecideInput,
  isActive,
  isFinal,
  type JudgedMark,
} from "../campaign/index.js";
import type { CampaignTransaction, NodeRegistryRow } from "../campaign-store/index.js";
import { type StoredFacts, storedFactsOf } from "./facts.js";
import { FailureSightings } from "./row-sightings.js";

/** How often a copy re-reads the facts and registry rows of its active nodes. */
export const REFRESH_MS = 10_000;

/** One campaign's working copy at one row version. */
export interface WorkingCopy {
  readonly campaignId: string;
  /** The campaign row version these records are current for. */
  readonly version: number;
  /** Every node record, in canary order. */
  readonly nodes: readonly CampaignNode[];
  /** Registry rows of the nodes that were open when loaded (refreshed by Hellos). */
  readonly registry: ReadonlyMap<string, NodeRegistryRow>;
  /** Persisted facts by node id. */
  readonly stored: ReadonlyMap<string, StoredFacts>;
  /** Position of each node id in `nodes`. */
  readonly positions: ReadonlyMap<string, number>;
  /** The distinct pools of its nodes. */
  readonly pools: readonly string[];
  /**
   * Nodes that sent a Hello since the last committed decision; undefined right after a load
   * (every node counts as changed).
   */
  readonly helloSince: ReadonlySet<string> | undefined;
  /** The last committed decision's mark and the facts changed since; undefined: judge all. */
  readonly judgedSince: DecideInput["judgedSince"];
  /** The nodes with changed facts as this copy was handed out (give them back to `commit`). */
  readonly factsSeen: ReadonlySet<string>;
}

interface Copy {
  version: number;
  nodes: CampaignNode[];
  index: Map<string, number>;
  pools: string[];
  /** Nodes that sent a Hello since the last committed decision (or since the load). */
  hellos: Set<string>;
  /** Nodes whose registry row another Control changed: re-read by the next decision. */
  registryStale: Set<string>;
  /** True once a decision that looked at every waiting node committed over this copy. */
  checkedAll: boolean;
  /** When the active nodes' facts and registry rows were last re-read (epoch ms). */
  refreshedAt: number;
  registry: Map<string, NodeRegistryRow>;
  stored: Map<string, StoredFacts>;
  /** The last committed decision's judged mark (undefined after a load: judge every node). */
  mark: JudgedMark | undefined;
  /** Nodes whose facts may have changed since the decision that left `mark` read them. */
  factsChanged: Set<string>;
}

/** The working copies of the campaigns this worker decides. */
export class WorkingCopies {
  private readonly copies = new Map<string, Copy>();
  private readonly stale = new Map<string, Set<string>>();
  private readonly loading = new Set<string>();
  /** Nodes that sent a Hello while some copy was loading: re-read once the load is done. */
  private readonly hellosDuringLoad = new Set<string>();

  /** @param self this Control's instance id (the `held_by` of the nodes connected here). */
  /** When this leader first loaded each config failure (the time the engine judges it by). */
  private readonly failureSightings = new FailureSightings();

  constructor(private readonly self = "") {}

  /**
   * Marks the persisted facts of `nodeId` in `campaignId` for re-reading. Campaigns without a
   * copy are ignored (a made-up id in a report costs nothing): their first decision reads all.
   */
  markStale(campaignId: string, nodeId: string): void {
    if (!this.copies.has(campaignId) && !this.loading.has(campaignId)) return;
    let nodes = this.stale.get(campaignId);
    if (nodes === undefined) {
      nodes = new Set();
      this.stale.set(campaignId, nodes);
    }
    nodes.add(nodeId);
  }

  /** Takes a node's new Hello on this Control into every copy that holds its registry row. */
  noteHello(node: ConnectedNode): void {
    if (this.loading.size > 0) this.hellosDuringLoad.add(node.nodeId);
    for (const copy of this.copies.values()) {
      if (copy.index.has(node.nodeId)) {
        copy.hellos.add(node.nodeId);
        copy.factsChanged.add(node.nodeId);
      }
      const row = copy.registry.get(node.nodeId);
      if (row === undefined) continue;
      copy.registry.set(node.nodeId, {
        ...row,
        boot_id: node.bootId,
        agent_version: node.agentVersion,
        capabilities: [...node.capabilities],
        platform: node.platform,
        last_seen: node.connectedAt,
        online: true,
        held_by: this.self,
      });
    }
  }

  /**
   * Marks the registry row of `nodeId` for re-reading in every copy of a campaign it belongs
   * to (another Control wrote it: a Hello, a stream end, a sweep). The node counts as having
   * sent a Hello (its waiting record is looked at again).
   */
  markRegistryStale(nodeId: string): void {
    if (this.loading.size > 0) this.hellosDuringLoad.add(nodeId);
    for (const copy of this.copies.values()) {
      if (copy.index.has(nodeId)) copy.registryStale.add(nodeId);
    }
  }

  /** Takes fresher registry rows (e.g. a node found disabled) into the campaign's copy. */
  noteRegistry(campaignId: string, rows: readonly NodeRegistryRow[]): void {
    const copy = this.copies.get(campaignId);
    if (copy === undefined) return;
    for (const row of rows) {
      if (!copy.index.has(row.id)) continue;
      copy.registry.set(row.id, row);
      copy.factsChanged.add(row.id);
    }
  }

  /** Drops a campaign's copy (finished, or no longer decided here). */
  forget(campaignId: string): void {
    this.copies.delete(campaignId);
    this.stale.delete(campaignId);
    this.failureSightings.forget(campaignId);
  }

  /** Drops every copy (leadership changed hands). */
  clear(): void {
    this.copies.clear();
    this.stale.clear();
    this.failureSightings.clear();
  }

  /** How many copies are held (for tests and logs). */
  get size(): number {
    return this.copies.size;
  }

  /**
   * The copy of `campaignId` at row `version`, read through `tx` (the decision's transaction):
   * loaded whole when there is none or it is at another version, else with the facts of its
   * stale nodes re-read.
   */
  async current(
    tx: CampaignTransaction,
    campaignId: string,
    version: number,
    now: number,
  ): Promise<WorkingCopy> {
    const held = this.copies.get(campaignId);
    const copy = held?.version === version ? held : await this.load(tx, campaignId, version, now);
    if (now - copy.refreshedAt >= REFRESH_MS) await this.refreshActive(tx, campaignId, copy, now);
    await this.refreshRegistry(tx, copy);
    await this.refresh(tx, campaignId, copy, now);
    const changedFacts: ReadonlySet<string> = new Set(copy.factsChanged);
    return {
      campaignId,
      version: copy.version,
      nodes: copy.nodes,
      registry: copy.registry,
      stored: copy.stored,
      positions: copy.index,
      pools: copy.pools,
      helloSince: copy.checkedAll ? new Set(copy.hellos) : undefined,
      judgedSince: copy.mark === undefined ? undefined : { mark: copy.mark, changedFacts },
      factsSeen: changedFacts,
    };
  }

  /**
   * Takes a committed decision's node records; the copy is now at `version`. `seen` are the
   * Hellos that decision was given (its `helloSince`, undefined: every node), and
   * `lookedAtWaiting` whether it actually looked at its current batch's waiting nodes (a
   * paused or breached batch is not looked at: its Hellos stay pending). `judged` is that
   * decision's mark and `facts` the copy's `factsSeen` it decided over.
   */
  commit(
    campaignId: string,
    version: number,
    changed: readonly CampaignNode[],
    seen: ReadonlySet<string> | undefined,
    lookedAtWaiting: boolean,
    judged?: { mark: JudgedMark | undefined; facts: ReadonlySet<string> },
  ): void {
    const copy = this.copies.get(campaignId);
    if (copy === undefined) return;
    copy.version = version;
    if (judged !== undefined) {
      copy.mark = judged.mark;
      for (const nodeId of judged.facts) copy.factsChanged.delete(nodeId);
    }
    if (lookedAtWaiting) {
      if (seen === undefined) copy.checkedAll = true;
      else for (const nodeId of seen) copy.hellos.delete(nodeId);
    }
    for (const n of changed) {
      const at = copy.index.get(n.nodeId);
      if (at !== undefined) copy.nodes[at] = n;
    }
  }

  private async load(
    tx: CampaignTransaction,
    campaignId: string,
    version: number,
    now: number,
  ): Promise<Copy> {
    // Facts written while this reads are marked stale again and re-read by `refresh`.
    this.copies.delete(campaignId);
    this.stale.delete(campaignId);
    this.loading.add(campaignId);
    try {
      const nodes = await tx.readNodes(campaignId);
      // Final nodes whose rollback is still judged need their facts as much as open ones.
      const open = nodes.filter((n) => !isFinal(n.state) || awaitsRollback(n)).map((n) => n.nodeId);
      const registry = await tx.readRegistry(open);
      const stored = storedFactsOf(
        await tx.readOperationFacts(campaignId),
        await tx.readConfigFailures(campaignId),
        this.failureSightings.seenMs(campaignId, now),
      );
      const copy: Copy = {
        version,
        hellos: new Set(),
        registryStale: new Set(),
        checkedAll: false,
        refreshedAt: now,
        nodes,
        index: new Map(nodes.map((n, i) => [n.nodeId, i])),
        pools: [...new Set(nodes.map((n) => n.pool))],
        registry: new Map(registry.map((r) => [r.id, r])),
        stored,
        mark: undefined,
        factsChanged: new Set(),
      };
      this.copies.set(campaignId, copy);
      // A Hello written after the registry was read above: read its row again.
      const late = [...this.hellosDuringLoad].filter((id) => copy.index.has(id));
      if (this.loading.size === 1) this.hellosDuringLoad.clear();
      for (const row of await tx.readRegistry(late)) copy.registry.set(row.id, row);
      for (const id of late) {
        copy.hellos.add(id);
        copy.factsChanged.add(id);
      }
      return copy;
    } finally {
      this.loading.delete(campaignId);
    }
  }

  /**
   * Re-reads the facts and registry rows of the copy's active nodes (and final ones awaiting
   * their rollback), and the registry rows of the waiting nodes it holds offline: a waiting
   * node that came back on another Control while that Control's announcement was lost (or
   * sent before this copy was loaded, at a takeover) would otherwise never be offered.
   */
  private async refreshActive(
    tx: CampaignTransaction,
    campaignId: string,
    copy: Copy,
    now: number,
  ): Promise<void> {
    const active = copy.nodes
      .filter((n) => isActive(n.state) || awaitsRollback(n))
      .map((n) => n.nodeId);
    const away = copy.nodes
      .filter((n) => n.state === "waiting" && copy.registry.get(n.nodeId)?.online !== true)
      .map((n) => n.nodeId);
    const rows = await tx.readRegistry([...active, ...away]);
    const waiting = new Set(away);
    for (const row of rows) {
      if (!sameRow(copy.registry.get(row.id), row)) {
        copy.factsChanged.add(row.id);
        // Back online elsewhere: looked at as a Hello here would be.
        if (waiting.has(row.id)) copy.hellos.add(row.id);
      }
      copy.registry.set(row.id, row);
    }
    for (const nodeId of active) this.markStale(campaignId, nodeId);
    copy.refreshedAt = now;
  }

  /** Re-reads the registry rows another Control changed; their nodes count as new Hellos. */
  private async refreshRegistry(tx: CampaignTransaction, copy: Copy): Promise<void> {
    if (copy.registryStale.size === 0) return;
    const nodeIds = [...copy.registryStale];
    copy.registryStale.clear();
    try {
      for (const row of await tx.readRegistry(nodeIds)) copy.registry.set(row.id, row);
    } catch (error) {
      for (const nodeId of nodeIds) copy.registryStale.add(nodeId);
      throw error;
    }
    for (const nodeId of nodeIds) {
      copy.hellos.add(nodeId);
      copy.factsChanged.add(nodeId);
    }
  }

  private async refresh(
    tx: CampaignTransaction,
    campaignId: string,
    copy: Copy,
    now: number,
  ): Promise<void> {
    const marked = this.stale.get(campaignId);
    if (marked === undefined || marked.size === 0) return;
    this.stale.delete(campaignId);
    const nodeIds = [...marked];
    try {
      const fresh = storedFactsOf(
        await tx.readOperationFacts(campaignId, nodeIds),
        await tx.readConfigFailures(campaignId, nodeIds),
        this.failureSightings.seenMs(campaignId, now),
      );
      for (const nodeId of nodeIds) {
        const facts = fresh.get(nodeId);
        const before = copy.stored.get(nodeId);
        if (facts === undefined) copy.stored.delete(nodeId);
        else copy.stored.set(nodeId, facts);
        if (!sameFacts(before, facts)) copy.factsChanged.add(nodeId);
      }
    } catch (error) {
      for (const nodeId of nodeIds) this.markStale(campaignId, nodeId);
      throw error;
    }
  }
}

/**
 * True when two registry rows of a node say the same but for when it was last seen (a re-read
 * that changed nothing a verdict reads: liveness alone is read only at a node's deadline, which
 * is judged anyway).
 */
function sameRow(a: NodeRegistryRow | undefined, b: NodeRegistryRow): boolean {
  if (a === undefined) return false;
  const { last_seen: _a, ...restA } = a;
  const { last_seen: _b, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}

/** True when two readings of a node's persisted facts hold the same reports and failures. */
function sameFacts(a: StoredFacts | undefined, b: StoredFacts | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}
