/**
 * The campaign worker: the imperative shell around `decide`. While this process holds the
 * leader lease, each {@link CampaignWorker.step} decides the campaigns that are due (marked
 * by an agent event, every `intervalMs`, or at a decision's `wakeAt`), sends what each
 * decision committed to the outbox, and re-sends unacknowledged operations when their node
 * reconnects (and periodically while it stays silent). {@link CampaignWorker.run} is the loop
 * that calls `step` and sleeps until the next due time or event. Time comes only from the
 * injected Clock; the store, the agents and the lease are ports, so the deterministic
 * simulation drives this same code.
 *
 * Liveness after a restart: a node without a stream is offline only `offlineAfterMs` after
 * this process became leader (or after it was last heard from, whichever is later), so a
 * restarted Control never skips nodes that simply have not reconnected yet.
 */
import type { AgentEvent } from "../agents/events.js";
import {
  type CampaignStore,
  CampaignVersionConflict,
  type OfferRelease,
  StaleLeaderError,
} from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import { type DecisionOutcome, runDecision } from "./decision.js";
import { DueQueue } from "./due-queue.js";
import type { WorkerGateway } from "./facts.js";
import { EventIntake } from "./intake.js";
import { Leadership } from "./leadership.js";
import { sendAll } from "./outbox.js";
import { WorkingCopies } from "./working-copy.js";

/** How often buffered agent reports are written between passes. */
const REPORT_FLUSH_MS = 50;

/** Options of {@link createCampaignWorker}. */
export interface CampaignWorkerOptions {
  readonly store: CampaignStore;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  /** This process's unique id (the lease holder). */
  readonly holder: string;
  /** How often every live campaign is decided even without events (config worker.intervalMs). */
  readonly intervalMs: number;
  /** Base URL of artifacts Control serves, for upgrade operations. */
  readonly publicUrl: () => string;
  /** Silence after which a node without a stream is offline (config timeouts.offlineAfterSeconds). */
  readonly offlineAfterMs: number;
  /** Lease time-to-live (default: 3 × intervalMs, within 3–15 s). */
  readonly leaseTtlMs?: number;
  /** How long events are gathered before a decision (default 20 ms). */
  readonly debounceMs?: number;
  /** Re-send an unacknowledged operation this long after its last send (default 30 s). */
  readonly resendAfterMs?: number;
}

/** A campaign worker; see {@link createCampaignWorker}. */
export interface CampaignWorker {
  readonly lease: Leadership["lease"];
  /** Marks a campaign due (all live campaigns when omitted) and wakes the loop. */
  wake(campaignId?: string): void;
  /**
   * Listens to the gateway's agent events (reports, config failures, connects); `run` does
   * this itself. Returns the unsubscribe function.
   */
  listen(): () => void;
  /**
   * One turn of the loop at the clock's now: ticks the lease when due, and as leader writes
   * buffered reports, decides every due campaign, and sends. Never rejects.
   * @returns when the next turn is due (epoch ms) and whether something is due at once.
   */
  step(): Promise<{ readonly next: number; readonly busy: boolean }>;
  /** Writes buffered agent reports now. */
  flush(): Promise<void>;
  /** Runs until `signal` aborts, then gives the lease up. Never rejects. */
  run(signal: AbortSignal): Promise<void>;
  /** Called with the campaign id after each committed decision; returns the unsubscribe. */
  onDecided(listener: (campaignId: string) => void): () => void;
}

/** Resolves when `signal` aborts (a wait on an event, not on time). */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

async function nap(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  await clock.sleep(ms, signal).catch(() => {});
}

/** Creates the worker; it does nothing until {@link CampaignWorker.step} or `run`. */
export function createCampaignWorker(o: CampaignWorkerOptions): CampaignWorker {
  const log = o.log.child({ component: "campaign-worker" });
  const ttl = o.leaseTtlMs ?? Math.min(15_000, Math.max(3000, 3 * o.intervalMs));
  const debounceMs = o.debounceMs ?? 20;
  const resendAfterMs = o.resendAfterMs ?? 30_000;
  const leadership = new Leadership(o.store.lease({ holder: o.holder, ttlMs: ttl }), ttl);
  const due = new DueQueue();
  const nodeCampaign = new Map<string, string>();
  const tracked = new Set<string>();
  const reconnected = new Set<string>();
  /** When this process last heard from a node whose stream ended (epoch ms). */
  const lastHeard = new Map<string, number>();
  const listeners = new Set<(campaignId: string) => void>();
  const releases = new Map<string, OfferRelease>();
  const copies = new WorkingCopies();
  let nextPeriodic = 0;
  let nextResend = 0;
  let waker: AbortController | undefined;
  let flushWaker: AbortController | undefined;

  const wake = () => waker?.abort();
  const intake = new EventIntake({
    store: o.store,
    log,
    campaignOfNode: (nodeId) => nodeCampaign.get(nodeId),
    bootIdOf: (nodeId) => o.gateway.connected(nodeId)?.bootId,
    touched: (campaignId) => {
      // Only campaigns this worker decides: a made-up id in a report costs nothing.
      if (!tracked.has(campaignId)) return;
      due.markDue(campaignId);
      wake();
    },
    connected: (nodeId, node) => {
      lastHeard.delete(nodeId);
      copies.noteHello(node);
      reconnected.add(nodeId);
      wake();
    },
    written: (campaignId, nodeId) => copies.markStale(campaignId, nodeId),
  });
  const onEvent = (event: AgentEvent) => {
    if (event.kind === "disconnected") lastHeard.set(event.nodeId, o.clock.now().getTime());
    intake.handle(event);
    if (intake.pending) flushWaker?.abort();
  };
  const deps = {
    store: o.store,
    lease: leadership.lease,
    gateway: o.gateway,
    clock: o.clock,
    publicUrl: o.publicUrl,
    copies,
    liveness: {
      get readyAt() {
        return leadership.readyAt;
      },
      offlineAfterMs: o.offlineAfterMs,
      lastHeardMs: (nodeId: string) => lastHeard.get(nodeId),
    },
    release: async (version: string) => {
      const cached = releases.get(version);
      if (cached) return cached;
      const loaded = await o.store.offerRelease(version);
      if (loaded) releases.set(version, loaded);
      return loaded;
    },
  };

  const untrack = (campaignId: string) => {
    tracked.delete(campaignId);
    due.forget(campaignId);
    copies.forget(campaignId);
    for (const [nodeId, id] of nodeCampaign) if (id === campaignId) nodeCampaign.delete(nodeId);
  };

  /** Drops what this process knew as leader (taking or losing the lease). */
  const forgetAll = () => {
    for (const id of [...tracked]) untrack(id);
    copies.clear();
    due.reset();
    reconnected.clear();
    nextResend = 0;
  };

  const record = (campaignId: string, out: DecisionOutcome) => {
    if (!out.live || out.finished) {
      untrack(campaignId);
    } else {
      if (!tracked.has(campaignId)) {
        tracked.add(campaignId);
        for (const nodeId of out.nodeIds) nodeCampaign.set(nodeId, campaignId);
      }
      due.wakeAtTime(campaignId, out.decision?.wakeAt);
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
  const stamps = {
    markSent: (ids: readonly string[], at: Date) =>
      intake.exclusive(() => o.store.markSent(ids, at)),
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

  const send = async (outgoing: Parameters<typeof sendAll>[2]) => {
    if (outgoing.length === 0) return;
    await timed("send", outgoing.length, () =>
      sendAll(stamps, o.gateway, outgoing, o.clock.now(), log),
    );
  };

  /** Decides one campaign; returns false when the lease was lost. */
  const decideOne = async (campaignId: string): Promise<boolean> => {
    try {
      const out = await runDecision(deps, campaignId);
      record(campaignId, out);
      await send(out.outgoing);
      if (out.undeliverable > 0) due.markDue(campaignId);
      if (out.live) for (const l of listeners) l(campaignId);
      return true;
    } catch (error) {
      if (error instanceof StaleLeaderError) {
        log.warn({ campaignId, err: error.message }, "decision refused: not the leader");
        return false;
      }
      if (error instanceof CampaignVersionConflict) {
        due.markDue(campaignId);
        return true;
      }
      log.error({ campaignId, err: error }, "campaign decision failed; retrying later");
      due.wakeAtTime(campaignId, o.clock.now().getTime() + o.intervalMs);
      return true;
    }
  };

  /** One pass as leader; returns false when the lease was lost. */
  const pass = async (now: number): Promise<boolean> => {
    await timed("flush reports", 0, () => intake.flush()).catch((error: unknown) =>
      log.warn({ err: error }, "report flush failed"),
    );
    if (now >= nextPeriodic) {
      due.markAllDue();
      nextPeriodic = now + o.intervalMs;
    }
    const resendStale = now >= nextResend;
    if (resendStale) nextResend = now + Math.min(resendAfterMs, 5 * o.intervalMs);
    for (const id of await due.take(now, () => o.store.liveCampaignIds())) {
      if (!(await decideOne(id))) return false;
    }
    if (reconnected.size > 0) {
      const nodeIds = [...reconnected];
      reconnected.clear();
      await send(
        await timed("read unacknowledged of reconnected", nodeIds.length, () =>
          o.store.unackedOperations({ nodeIds }),
        ),
      );
    }
    if (resendStale) {
      const sentBefore = new Date(now - resendAfterMs);
      await send(
        await timed("read unacknowledged", 0, () => o.store.unackedOperations({ sentBefore })),
      );
    }
    return true;
  };

  const step = async (): Promise<{ next: number; busy: boolean }> => {
    const now = o.clock.now().getTime();
    try {
      const change = await leadership.tick(now);
      if (change !== "none") {
        forgetAll();
        nextPeriodic = 0;
      }
      if (leadership.leading) {
        if (!(await pass(now))) {
          leadership.lost();
          forgetAll();
        }
      } else {
        reconnected.clear();
        await intake.flush();
      }
    } catch (error) {
      log.error({ err: error }, "campaign worker pass failed");
      return { next: now + Math.min(1000, o.intervalMs), busy: false };
    }
    let next = leadership.nextTick;
    if (leadership.leading) {
      next = Math.min(next, nextPeriodic, nextResend, due.nextWake() ?? Number.POSITIVE_INFINITY);
    }
    return { next, busy: leadership.leading && (due.hasDue || reconnected.size > 0) };
  };

  return {
    lease: leadership.lease,
    wake(campaignId) {
      if (campaignId === undefined) due.markAllDue();
      else due.markDue(campaignId);
      wake();
    },
    listen: () => o.gateway.subscribe(onEvent),
    step,
    flush: () => intake.flush(),
    onDecided(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async run(signal) {
      const unsubscribe = o.gateway.subscribe(onEvent);
      // Reports are written within ~50 ms of arrival even while a long decision or send runs
      // (a pass also flushes before deciding, so decisions always see what arrived). With
      // nothing buffered the flusher sleeps until an event buffers something: no idle polling.
      const flusher = (async () => {
        while (!signal.aborted) {
          if (!intake.pending) {
            const controller = new AbortController();
            flushWaker = controller;
            await aborted(AbortSignal.any([signal, controller.signal]));
            flushWaker = undefined;
            continue;
          }
          await nap(o.clock, REPORT_FLUSH_MS, signal);
          await intake.flush().catch(() => {});
        }
      })();
      try {
        while (!signal.aborted) {
          const { next, busy } = await step();
          if (busy) {
            await nap(o.clock, debounceMs, signal);
            continue;
          }
          const controller = new AbortController();
          waker = controller;
          const waitMs = next - o.clock.now().getTime();
          await nap(o.clock, waitMs, AbortSignal.any([signal, controller.signal]));
          waker = undefined;
          if (controller.signal.aborted) await nap(o.clock, debounceMs, signal);
        }
      } finally {
        await flusher;
        unsubscribe();
        await intake.flush().catch(() => {});
        await leadership.lease.release();
      }
    },
  };
}
