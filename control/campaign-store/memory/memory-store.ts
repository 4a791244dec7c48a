/**
 * The memory adapter of the {@link CampaignStore} port, for unit tests and the deterministic
 * simulation. It keeps the semantics of the SQL adapter (the same contract tests run on both):
 * transactions run one at a time and their writes apply only on commit; a decision write
 * fails on a stale campaign version; reports match their outbox row on id AND node; a lease
 * is taken over when expired or when its holder's session ended ({@link MemoryCampaignStore.endSession},
 * as a killed process's database session ends), a holder whose session ended loses the lead at
 * its next tick, and lease ticks and releases wait for the open transactions (in SQL they wait
 * for a fenced transaction's lock on the lease row).
 *
 * Notifications fan out synchronously: `notify` calls every listener of the channel, in
 * order, before it resolves (the same payload packing as PostgreSQL's); a listener's `onGap`
 * runs once, on a microtask after it started listening.
 *
 * Faults for the simulation (`store-faults.ts`): {@link MemoryCampaignStore.outage} makes every
 * call fail, as an unreachable database does; {@link MemoryCampaignStore.injectErrors} makes
 * single calls fail, before they write or after their write applied.
 */
import type { Clock } from "../../clock.js";
import { packLines, unpackLines } from "../../shared/notify-channels.js";
import type { ReleaseYank } from "../offer-release.js";
import {
  type CampaignStore,
  type CampaignTransaction,
  type GateResultWrite,
  type LeaderLease,
  type NotificationListener,
  StaleLeaderError,
} from "../port.js";
import { type MemoryRegistryRow, MemoryTables } from "./memory-tables.js";
import { MemoryTransaction } from "./memory-transaction.js";
import {
  injectedError,
  type StoreCallName,
  type StoreFault,
  type StoreFaultInjector,
  StoreOutageError,
} from "./store-faults.js";

/** A campaign store held in memory; see the file's TSDoc. */
export class MemoryCampaignStore implements CampaignStore {
  /** The tables, for seeding and for the simulation's invariant checks (read them, don't write). */
  readonly tables = new MemoryTables();
  private down = false;
  private injector: StoreFaultInjector | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly sessions = new Set<string>();
  private readonly listeners = new Set<{
    readonly channels: ReadonlySet<string>;
    readonly listener: NotificationListener;
  }>();

  constructor(private readonly clock: Clock) {}

  /** Starts or ends an outage: while down, every call rejects with {@link StoreOutageError}. */
  outage(down: boolean): void {
    this.down = down;
  }

  /**
   * From now on asks `injector`, at each call of the store (lease statements aside), whether an
   * error strikes it and where (`store-faults.ts`); undefined stops injecting.
   */
  injectErrors(injector: StoreFaultInjector | undefined): void {
    this.injector = injector;
  }

  /** Ends `holder`'s session: its lease may be taken over at once (its process died). */
  endSession(holder: string): void {
    this.sessions.delete(holder);
  }

  /** Adds or replaces a node's registry row (its pool and labels ride along). */
  putNode(row: MemoryRegistryRow): void {
    this.tables.registry.set(row.id, { ...row, capabilities: [...row.capabilities] });
  }

  private check(): void {
    if (this.down) throw new StoreOutageError("the campaign store is unreachable");
  }

  /**
   * Starts call `call`: fails in an outage or when an injected error strikes it before it
   * writes; returns the error to raise once its writes applied, if one strikes it then.
   */
  private enter(call: StoreCallName): StoreFault | undefined {
    this.check();
    const fault = this.injector?.(call);
    if (fault === "before") throw injectedError(call, fault);
    return fault;
  }

  /** Ends call `call`, its writes applied: raises the error {@link enter} drew for after them. */
  private leave(call: StoreCallName, fault: StoreFault | undefined): void {
    if (fault === "after_commit") throw injectedError(call, fault);
  }

  /** Runs `run` after every transaction and lease statement queued before it. */
  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }

  transaction<T>(work: (tx: CampaignTransaction) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      const fault = this.enter("transaction");
      const tx = new MemoryTransaction(this.tables, () => this.check());
      const result = await work(tx);
      this.check();
      tx.commit();
      this.leave("transaction", fault);
      return result;
    });
  }

  async liveCampaignIds(): Promise<string[]> {
    this.enter("liveCampaignIds");
    return this.tables.liveCampaignIds();
  }

  async openNodeIds(campaignId: string): Promise<string[]> {
    this.enter("openNodeIds");
    return this.tables.openNodeIds(campaignId);
  }

  async recordFacts(
    reports: Parameters<CampaignStore["recordFacts"]>[0],
    failures: Parameters<CampaignStore["recordFacts"]>[1],
  ): ReturnType<CampaignStore["recordFacts"]> {
    const fault = this.enter("recordFacts");
    this.tables.recordFacts(reports, failures);
    this.leave("recordFacts", fault);
  }

  async unackedOperations(
    filter: Parameters<CampaignStore["unackedOperations"]>[0],
  ): ReturnType<CampaignStore["unackedOperations"]> {
    this.enter("unackedOperations");
    const { rows, late } = this.tables.unacked(filter);
    if (late.length === 0) return rows;
    // Late rollbacks are admitted one transaction at a time, as SQL serializes them with every
    // decision's pool read (`pg_advisory_xact_lock`): never between a decision's read and write.
    const admitted = await this.serial(async () => {
      this.check();
      return this.tables.admitLate(late, filter.now.getTime());
    });
    const lateIds = new Set(late);
    return rows.filter((o) => !lateIds.has(o.operation.id) || admitted.has(o.operation.id));
  }

  async markSent(operationIds: readonly string[], at: Date): Promise<void> {
    const fault = this.enter("markSent");
    this.tables.markSent(operationIds, at);
    this.leave("markSent", fault);
  }

  /**
   * Yanks a registered release, as `agentctl release yank` does on the database: its upgrades
   * are never sent again and decisions see it yanked. The first yank of a version stays.
   */
  yankRelease(yank: ReleaseYank): void {
    this.check();
    if (!this.tables.yanks.has(yank.version)) this.tables.yanks.set(yank.version, { ...yank });
  }

  async offerRelease(version: string): ReturnType<CampaignStore["offerRelease"]> {
    this.check();
    return this.tables.releases.get(version);
  }

  async recordGateResult(w: GateResultWrite): Promise<void> {
    const fault = this.enter("recordGateResult");
    if (this.tables.campaigns.has(w.campaignId)) this.tables.gateResults.record(w);
    this.leave("recordGateResult", fault);
  }

  async liveCampaignOfNodes(nodeIds: readonly string[]): Promise<Map<string, string>> {
    this.enter("liveCampaignOfNodes");
    return this.tables.liveCampaignOfNodes(nodeIds);
  }

  async notify(channel: string, lines: readonly string[]): Promise<void> {
    const fault = this.enter("notify");
    for (const payload of packLines(lines)) {
      for (const { channels, listener } of [...this.listeners]) {
        if (channels.has(channel)) listener.onNotify(channel, unpackLines(payload));
      }
    }
    this.leave("notify", fault);
  }

  listen(channels: readonly string[], listener: NotificationListener): () => Promise<void> {
    const entry = { channels: new Set(channels), listener };
    this.listeners.add(entry);
    queueMicrotask(() => {
      if (this.listeners.has(entry)) listener.onGap?.();
    });
    return async () => {
      this.listeners.delete(entry);
    };
  }

  lease(options: Parameters<CampaignStore["lease"]>[0]): LeaderLease {
    const name = options.name ?? "campaign-worker";
    const { holder, ttlMs } = options;
    const store = this;
    let epoch: number | undefined;
    // Losing the lead drops the lease's session, as the SQL lease destroys its connection: the
    // holder's next tick may take the lease back at once.
    const lose = (why: string) => {
      if (epoch !== undefined) options.onLost?.(why);
      epoch = undefined;
      store.sessions.delete(holder);
    };
    return {
      name,
      holder,
      get epoch() {
        return epoch;
      },
      // Like the SQL lease's statements, a tick waits for the open transactions (a fenced one
      // holds the lease row until it ends).
      tick: () =>
        store.serial(async () => {
          const now = store.clock.now().getTime();
          try {
            store.check();
          } catch (error) {
            lose((error as Error).message);
            return false;
          }
          const row = store.tables.leases.get(name);
          if (epoch !== undefined) {
            // A renewal runs on the holder's own session: once that ended, so did the lead.
            if (!store.sessions.has(holder)) {
              lose("the lease session ended");
              return false;
            }
            if (row?.holder === holder && row.epoch === epoch) {
              row.expiresAt = now + ttlMs;
              return true;
            }
            lose("another process took the lease over");
            return false;
          }
          const free = row === undefined || row.expiresAt < now || !store.sessions.has(row.holder);
          if (free) {
            const next = (row?.epoch ?? 0) + 1;
            store.tables.leases.set(name, { holder, epoch: next, expiresAt: now + ttlMs });
            store.sessions.add(holder);
            epoch = next;
          }
          return epoch !== undefined;
        }),
      async fence(tx) {
        const mine = epoch;
        if (mine === undefined) throw new StaleLeaderError("this Control does not lead");
        if (!(await tx.holdsLease(name, holder, mine))) {
          lose("fence refused a write");
          throw new StaleLeaderError(`lease ${name} epoch ${mine} is no longer held`);
        }
      },
      async release() {
        const mine = epoch;
        epoch = undefined;
        if (mine === undefined) return;
        await store.serial(async () => {
          const row = store.tables.leases.get(name);
          if (!store.down && row?.holder === holder && row.epoch === mine) {
            row.expiresAt = store.clock.now().getTime() - 1000;
          }
        });
      },
    };
  }
}
