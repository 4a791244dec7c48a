/**
 * The campaign worker: the imperative shell around `decide`. While this process holds the
 * leader lease it runs a decision for each live campaign every `intervalMs`, soon after
 * each agent event that concerns it (debounced a few ms), and at the decision's `wakeAt`;
 * it sends what each decision committed to the outbox, and re-sends unacknowledged
 * operations when their node reconnects (and periodically while it stays silent).
 * Time comes only from the injected Clock.
 *
 * Warm-up: right after this process becomes leader (typically a restart) no stream is open
 * yet, so every node would look offline and waiting nodes would be skipped. For `warmUpMs`
 * a campaign is decided only once all its unfinished nodes have reconnected; after that,
 * liveness is trusted again.
 */
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import type { Logger } from "../log.js";
import { type DecisionOutcome, runDecision } from "./decision.js";
import type { WorkerGateway } from "./facts.js";
import { EventIntake } from "./intake.js";
import { createLeaderLease, type LeaderLease, StaleLeaderError } from "./lease.js";
import { loadOfferRelease, type OfferRelease } from "./operations.js";
import { type Outgoing, sendAll, unackedOperations } from "./outbox.js";
import { CampaignVersionConflict, liveCampaignIds, openNodeIds, type Queryable } from "./store.js";
import { WorkingCopies } from "./working-copy.js";

/** How often buffered agent reports are written between passes. */
const REPORT_FLUSH_MS = 50;

/** Options of {@link createCampaignWorker}. */
export interface CampaignWorkerOptions {
  readonly db: Database;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  /** This process's unique id (the lease holder). */
  readonly holder: string;
  /** How often every live campaign is decided even without events (config worker.intervalMs). */
  readonly intervalMs: number;
  /** Base URL of artifacts Control serves, for upgrade operations. */
  readonly publicUrl: () => string;
  /** Lease time-to-live (default: 3 × intervalMs, within 3–15 s). */
  readonly leaseTtlMs?: number;
  /** How long events are gathered before a decision (default 20 ms). */
  readonly debounceMs?: number;
  /** Re-send an unacknowledged operation this long after its last send (default 30 s). */
  readonly resendAfterMs?: number;
  /** After becoming leader, wait at most this long for a campaign's nodes to reconnect (default 0). */
  readonly warmUpMs?: number;
}

/** A campaign worker; see {@link createCampaignWorker}. */
export interface CampaignWorker {
  readonly lease: LeaderLease;
  /** Marks a campaign due (all live campaigns when omitted) and wakes the loop. */
  wake(campaignId?: string): void;
  /** Runs until `signal` aborts, then gives the lease up. Never rejects. */
  run(signal: AbortSignal): Promise<void>;
  /** Called with the campaign id after each committed decision; returns the unsubscribe. */
  onDecided(listener: (campaignId: string) => void): () => void;
}

async function nap(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  await clock.sleep(ms, signal).catch(() => {});
}

/** Creates the worker; it does nothing until {@link CampaignWorker.run}. */
export function createCampaignWorker(o: CampaignWorkerOptions): CampaignWorker {
  const log = o.log.child({ component: "campaign-worker" });
  const ttl = o.leaseTtlMs ?? Math.min(15_000, Math.max(3000, 3 * o.intervalMs));
  const debounceMs = o.debounceMs ?? 20;
  const resendAfterMs = o.resendAfterMs ?? 30_000;
  const lease = createLeaderLease({ pool: o.db.pool, holder: o.holder, log, ttlMs: ttl });
  const dirty = new Set<string>();
  const wakeAt = new Map<string, number>();
  const nodeCampaign = new Map<string, string>();
  const tracked = new Set<string>();
  const reconnected = new Set<string>();
  const listeners = new Set<(campaignId: string) => void>();
  const releases = new Map<string, OfferRelease>();
  const copies = new WorkingCopies();
  let allDue = true;
  let warmUntil = 0;
  let waker: AbortController | undefined;

  const wake = () => waker?.abort();
  const intake = new EventIntake({
    db: o.db.pool,
    log,
    campaignOfNode: (nodeId) => nodeCampaign.get(nodeId),
    bootIdOf: (nodeId) => o.gateway.connected(nodeId)?.bootId,
    touched: (campaignId) => {
      // Only campaigns this worker decides: a made-up id in a report costs nothing.
      if (!tracked.has(campaignId)) return;
      dirty.add(campaignId);
      wake();
    },
    connected: (nodeId, node) => {
      copies.noteHello(node);
      reconnected.add(nodeId);
      wake();
    },
    written: (campaignId, nodeId) => copies.markStale(campaignId, nodeId),
  });
  const deps = {
    pool: o.db.pool,
    lease,
    gateway: o.gateway,
    clock: o.clock,
    publicUrl: o.publicUrl,
    copies,
    release: async (version: string) => {
      const cached = releases.get(version);
      if (cached) return cached;
      const loaded = await loadOfferRelease(o.db, version);
      if (loaded) releases.set(version, loaded);
      return loaded;
    },
  };

  const untrack = (campaignId: string) => {
    tracked.delete(campaignId);
    wakeAt.delete(campaignId);
    copies.forget(campaignId);
    for (const [nodeId, id] of nodeCampaign) if (id === campaignId) nodeCampaign.delete(nodeId);
  };

  /** Drops what this process knew as leader (taking or losing the lease). */
  const forgetAll = () => {
    for (const id of [...tracked]) untrack(id);
    copies.clear();
  };

  const record = (campaignId: string, out: DecisionOutcome) => {
    if (!out.live || out.finished) {
      untrack(campaignId);
    } else {
      if (!tracked.has(campaignId)) {
        tracked.add(campaignId);
        for (const nodeId of out.nodeIds) nodeCampaign.set(nodeId, campaignId);
      }
      const next = out.decision?.wakeAt;
      if (next === undefined) wakeAt.delete(campaignId);
      else wakeAt.set(campaignId, next);
    }
    const d = out.decision;
    if (d && (d.reasons.length > 0 || d.events.length > 0)) {
      log.info(
        {
          campaignId,
          phase: (d.changes.campaign ?? undefined)?.phase,
          batch: (d.changes.campaign ?? undefined)?.currentBatch,
          changedNodes: d.changes.nodes.length,
          ms: out.timings,
          actions: d.actions.length,
          events: d.events.map((e) => e.kind),
          reasons: d.reasons.slice(0, 20),
          moreReasons: Math.max(0, d.reasons.length - 20),
        },
        "campaign decision",
      );
    }
  };

  /** Send stamps run between report flushes, which update the same outbox rows. */
  const stamps: Queryable = {
    query: ((text: string, values?: unknown[]) =>
      intake.exclusive(() => o.db.pool.query(text, values))) as Queryable["query"],
  };

  /** Runs one step of a pass; a step slower than a second is logged with its size. */
  const timed = async <T>(step: string, size: number, work: () => Promise<T>): Promise<T> => {
    const began = performance.now();
    try {
      return await work();
    } finally {
      const ms = Math.round(performance.now() - began);
      if (ms >= 1000) log.info({ step, size, ms }, "slow campaign worker step");
    }
  };

  const send = async (outgoing: readonly Outgoing[]) => {
    if (outgoing.length === 0) return;
    await timed("send", outgoing.length, () =>
      sendAll(stamps, o.gateway, outgoing, o.clock.now(), log),
    );
  };

  /** Decides one campaign; returns false when the lease was lost. */
  const warming = async (campaignId: string): Promise<boolean> => {
    if (o.clock.now().getTime() >= warmUntil) return false;
    const open = await openNodeIds(o.db.pool, campaignId);
    if (open.every((nodeId) => o.gateway.connected(nodeId) !== undefined)) return false;
    wakeAt.set(campaignId, warmUntil);
    if (!tracked.has(campaignId)) {
      for (const nodeId of open) nodeCampaign.set(nodeId, campaignId);
    }
    return true;
  };

  const decideOne = async (campaignId: string): Promise<boolean> => {
    try {
      if (await warming(campaignId)) return true;
      const out = await runDecision(deps, campaignId);
      record(campaignId, out);
      await send(out.outgoing);
      if (out.undeliverable > 0) dirty.add(campaignId);
      if (out.live) for (const l of listeners) l(campaignId);
      return true;
    } catch (error) {
      if (error instanceof StaleLeaderError) {
        log.warn({ campaignId, err: error.message }, "decision refused: not the leader");
        return false;
      }
      if (error instanceof CampaignVersionConflict) {
        dirty.add(campaignId);
        return true;
      }
      log.error({ campaignId, err: error }, "campaign decision failed; retrying later");
      wakeAt.set(campaignId, o.clock.now().getTime() + o.intervalMs);
      return true;
    }
  };

  /** One pass as leader; returns false when the lease was lost. */
  const pass = async (now: number, resendStale: boolean): Promise<boolean> => {
    await timed("flush reports", 0, () => intake.flush()).catch((error: unknown) =>
      log.warn({ err: error }, "report flush failed"),
    );
    if (allDue) {
      allDue = false;
      for (const id of await liveCampaignIds(o.db.pool)) dirty.add(id);
    }
    for (const [id, at] of wakeAt) if (at <= now) dirty.add(id);
    const due = [...dirty];
    dirty.clear();
    for (const id of due) if (!(await decideOne(id))) return false;
    if (reconnected.size > 0) {
      const nodeIds = [...reconnected];
      reconnected.clear();
      await send(
        await timed("read unacknowledged of reconnected", nodeIds.length, () =>
          unackedOperations(o.db.pool, { nodeIds }),
        ),
      );
    }
    if (resendStale) {
      const sentBefore = new Date(now - resendAfterMs);
      await send(
        await timed("read unacknowledged", 0, () => unackedOperations(o.db.pool, { sentBefore })),
      );
    }
    return true;
  };

  return {
    lease,
    wake(campaignId) {
      if (campaignId === undefined) allDue = true;
      else dirty.add(campaignId);
      wake();
    },
    onDecided(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async run(signal) {
      const unsubscribe = o.gateway.subscribe(intake.handle);
      // Reports are written within ~50 ms of arrival even while a long decision or send runs
      // (a pass also flushes before deciding, so decisions always see what arrived).
      const flusher = setInterval(() => {
        if (intake.pending) intake.flush().catch(() => {});
      }, REPORT_FLUSH_MS);
      flusher.unref();
      let leading = false;
      let nextLease = 0;
      let nextTick = 0;
      let nextResend = 0;
      try {
        while (!signal.aborted) {
          const now = o.clock.now().getTime();
          try {
            if (now >= nextLease) {
              const was = leading;
              leading = await lease.tick();
              nextLease = now + Math.floor(ttl / 3);
              if (was && !leading) forgetAll();
              if (leading && !was) {
                allDue = true;
                warmUntil = now + (o.warmUpMs ?? 0);
                nextResend = 0;
                forgetAll();
              }
            }
            if (leading) {
              if (now >= nextTick) {
                allDue = true;
                nextTick = now + o.intervalMs;
              }
              const resendStale = now >= nextResend;
              if (resendStale) nextResend = now + Math.min(resendAfterMs, 5 * o.intervalMs);
              if (!(await pass(now, resendStale))) {
                leading = false;
                nextLease = 0;
                forgetAll();
              }
            } else {
              reconnected.clear();
              await intake.flush();
            }
          } catch (error) {
            log.error({ err: error }, "campaign worker pass failed");
            await nap(o.clock, Math.min(1000, o.intervalMs), signal);
          }
          if (dirty.size > 0 || reconnected.size > 0) {
            await nap(o.clock, debounceMs, signal);
            continue;
          }
          const after = o.clock.now().getTime();
          let until = nextLease;
          if (leading) until = Math.min(until, nextTick, nextResend, ...wakeAt.values());
          const controller = new AbortController();
          waker = controller;
          await nap(o.clock, until - after, AbortSignal.any([signal, controller.signal]));
          waker = undefined;
          if (controller.signal.aborted) await nap(o.clock, debounceMs, signal);
        }
      } finally {
        clearInterval(flusher);
        unsubscribe();
        await intake.flush().catch(() => {});
        await lease.release();
      }
    },
  };
}
