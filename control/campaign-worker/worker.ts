/**
 * The campaign worker: the imperative shell around `decide`, and each Control's loop. Every
 * Control runs one; while this process holds the leader lease, each
 * {@link CampaignWorker.step} decides the campaigns that are due (marked by an agent event
 * here, a notification from another Control, every `intervalMs`, or at a decision's
 * `wakeAt`) and hands what each decision committed to the outbox to its {@link Delivery}.
 * Whether it leads or not, each step writes the reports of the agents connected here and runs
 * the delivery, which sends the nodes connected here their operations.
 * {@link CampaignWorker.run} is the loop that calls `step` and sleeps until the next due time,
 * event or notification. Time comes only from the injected Clock; the store, the agents and
 * the lease are ports, so the deterministic simulation drives this same code.
 *
 * Controls wake each other through the store's notifications (PostgreSQL LISTEN/NOTIFY): the
 * leader announces operations for nodes held elsewhere ({@link OUTBOX_CHANNEL}); every Control
 * announces the facts it wrote ({@link FACTS_CHANNEL}) and the registry rows it changed
 * ({@link NODES_CHANNEL}, written by the node registry's own statements), and the campaigns
 * started or commanded through them ({@link CAMPAIGNS_CHANNEL}); the leader marks those
 * campaigns due and re-reads those rows.
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
import { CAMPAIGNS_CHANNEL, CONTROL_CHANNELS, FACTS_CHANNEL } from "../shared/notify-channels.js";
import { type DecisionOutcome, runDecision } from "./decision.js";
import { Delivery } from "./delivery.js";
import { DueQueue } from "./due-queue.js";
import type { WorkerGateway } from "./facts.js";
import { FleetLoop, type FleetOptions } from "./fleet-loop.js";
import { httpGateProbe } from "./gate-http.js";
import { type GateProbe, GateRunner } from "./gate-runner.js";
import { EventIntake } from "./intake.js";
import { Leadership } from "./leadership.js";
import { notificationListener } from "./notifications.js";
import type { DecisionResult, WorkerObserver } from "./observer.js";
import { nap, Waker } from "./waker.js";
import { WorkingCopies } from "./working-copy.js";

/** How often buffered agent reports are written between passes. */
const REPORT_FLUSH_MS = 50;

/** Options of {@link createCampaignWorker}. */
export interface CampaignWorkerOptions {
  readonly store: CampaignStore;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  /** This process's unique id (the lease holder, and the `held_by` of its nodes). */
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
  /** Desired versions and rollout plans (the leader's fleet passes); without it, none run. */
  readonly fleet?: FleetOptions;
  /** Told of each decision and of leadership (Control's metrics); default: nobody. */
  readonly observer?: WorkerObserver;
  /** Evaluates outside health gates (default: over HTTP, `gate-http.ts`). */
  readonly gateProbe?: GateProbe;
  /** Time between two evaluations of one gate (default: intervalMs). */
  readonly gateIntervalMs?: number;
  /** An evaluation taking longer counts as unreachable (default 10 s). */
  readonly gateTimeoutMs?: number;
}

/** A campaign worker; see {@link createCampaignWorker}. */
export interface CampaignWorker {
  readonly lease: Leadership["lease"];
  /** This Control's delivery (run by every step, leader or not). */
  readonly delivery: Delivery;
  /**
   * Marks a campaign due (all live campaigns when omitted) and wakes the loop; a campaign
   * marked due while another Control leads is announced to it.
   */
  wake(campaignId?: string): void;
  /**
   * Listens to the gateway's agent events (reports, config failures, connects) and to the
   * store's notifications from other Controls; `run` does this itself. Returns the
   * unsubscribe function.
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
  /** When this process last heard from a node whose stream ended (epoch ms). */
  const lastHeard = new Map<string, number>();
  const listeners = new Set<(campaignId: string) => void>();
  const releases = new Map<string, OfferRelease>();
  const copies = new WorkingCopies(o.holder);
  let nextPeriodic = 0;
  const stepWaker = new Waker();
  const flushWaker = new Waker();

  const wake = () => stepWaker.wake();
  const gates = new GateRunner({
    store: o.store,
    clock: o.clock,
    probe: o.gateProbe ?? httpGateProbe,
    log,
    intervalMs: o.gateIntervalMs ?? o.intervalMs,
    timeoutMs: o.gateTimeoutMs ?? 10_000,
    stored: (campaignId) => {
      due.markDue(campaignId);
      wake();
    },
  });
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
      fleet?.nudge(o.clock.now().getTime());
      copies.noteHello(node);
      delivery.noteConnected(nodeId);
      wake();
    },
    written: (campaignId, nodeId) => copies.markStale(campaignId, nodeId),
    // Whoever leads decides those campaigns: tell it (the leader hears its own, harmlessly).
    announce: (facts) =>
      o.store.notify(
        FACTS_CHANNEL,
        facts.map((f) => `${f.campaignId}/${f.nodeId}`),
      ),
  });
  /** Send stamps run between report flushes, which update the same outbox rows. */
  const delivery = new Delivery({
    store: o.store,
    gateway: o.gateway,
    clock: o.clock,
    log,
    resendAfterMs,
    periodMs: Math.min(resendAfterMs, 5 * o.intervalMs),
    exclusive: (work) => intake.exclusive(work),
    wake,
  });
  const onEvent = (event: AgentEvent) => {
    if (event.kind === "disconnected") lastHeard.set(event.nodeId, o.clock.now().getTime());
    intake.handle(event);
    if (intake.pending) flushWaker.wake();
  };

  const notifications = notificationListener({
    leading: () => leadership.leading,
    campaignOfNode: (nodeId) => nodeCampaign.get(nodeId),
    tracks: (campaignId) => tracked.has(campaignId),
    copies,
    due,
    delivery,
    wake,
  });
  const listenAll = () => {
    const unsubscribe = o.gateway.subscribe(onEvent);
    const unlisten = o.store.listen(CONTROL_CHANNELS, notifications);
    return async () => {
      unsubscribe();
      await unlisten().catch((error: unknown) =>
        log.warn({ err: (error as Error).message }, "could not stop listening"),
      );
    };
  };
  const deps = {
    store: o.store,
    lease: leadership.lease,
    gateway: o.gateway,
    clock: o.clock,
    publicUrl: o.publicUrl,
    copies,
    self: o.holder,
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

  const fleet =
    o.fleet === undefined
      ? undefined
      : new FleetLoop({
          options: o.fleet,
          lease: leadership.lease,
          gateway: o.gateway,
          clock: o.clock,
          log,
          self: o.holder,
          release: deps.release,
        });

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
    gates.clear();
  };

  const record = (campaignId: string, out: DecisionOutcome) => {
    gates.want(campaignId, out.finished ? undefined : out.campaign, o.clock.now().getTime());
    if (!out.live || out.finished) {
      untrack(campaignId);
      if (out.finished) fleet?.nudge(o.clock.now().getTime());
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

  const send = async (outgoing: DecisionOutcome["outgoing"]) => {
    if (outgoing.length === 0) return;
    await timed("send", outgoing.length, () => delivery.deliver(outgoing));
  };

  /** Decides one campaign; returns false when the lease was lost. */
  const decideOne = async (campaignId: string): Promise<boolean> => {
    const began = performance.now();
    const observe = (result: DecisionResult, out?: DecisionOutcome) =>
      o.observer?.decided(result, (performance.now() - began) / 1000, out?.decision?.events ?? []);
    try {
      const out = await runDecision(deps, campaignId);
      observe("committed", out);
      record(campaignId, out);
      await send(out.outgoing);
      if (out.undeliverable > 0) due.markDue(campaignId);
      if (out.live) for (const l of listeners) l(campaignId);
      return true;
    } catch (error) {
      if (error instanceof StaleLeaderError) {
        observe("not_leader");
        log.warn({ campaignId, err: error.message }, "decision refused: not the leader");
        return false;
      }
      if (error instanceof CampaignVersionConflict) {
        observe("conflict");
        due.markDue(campaignId);
        return true;
      }
      observe("failed");
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
    for (const id of await due.take(now, () => o.store.liveCampaignIds())) {
      if (!(await decideOne(id))) return false;
    }
    gates.tick(o.clock.now().getTime());
    return (await fleet?.run(now, (id) => due.markDue(id))) ?? true;
  };

  const step = async (): Promise<{ next: number; busy: boolean }> => {
    const now = o.clock.now().getTime();
    let failed = false;
    try {
      const change = await leadership.tick(now);
      if (change !== "none") {
        forgetAll();
        nextPeriodic = 0;
        fleet?.reset();
      }
      if (leadership.leading) {
        if (!(await pass(now))) {
          leadership.lost();
          forgetAll();
        }
      } else {
        await intake.flush();
      }
    } catch (error) {
      log.error({ err: error }, "campaign worker pass failed");
      failed = true;
    }
    o.observer?.leading(leadership.leading);
    // Leader or not: the nodes connected here get their operations.
    await timed("deliver", 0, () => delivery.step());
    if (failed) return { next: now + Math.min(1000, o.intervalMs), busy: false };
    let next = Math.min(leadership.nextTick, delivery.nextDue);
    if (leadership.leading) {
      next = Math.min(
        next,
        nextPeriodic,
        due.nextWake() ?? Number.POSITIVE_INFINITY,
        gates.nextDue ?? Number.POSITIVE_INFINITY,
      );
      if (fleet !== undefined) next = Math.min(next, fleet.nextAt);
    }
    return { next, busy: (leadership.leading && due.hasDue) || delivery.pending };
  };

  return {
    lease: leadership.lease,
    delivery,
    wake(campaignId) {
      if (campaignId === undefined) {
        due.markAllDue();
        fleet?.nudge(o.clock.now().getTime());
      } else due.markDue(campaignId);
      wake();
      // Started or commanded here while another Control leads: tell it now, not at its next
      // periodic pass.
      if (campaignId !== undefined && !leadership.leading) {
        void o.store
          .notify(CAMPAIGNS_CHANNEL, [campaignId])
          .catch((error: unknown) =>
            log.warn({ campaignId, err: (error as Error).message }, "could not wake the leader"),
          );
      }
    },
    listen() {
      const stop = listenAll();
      return () => {
        void stop();
      };
    },
    step,
    flush: () => intake.flush(),
    onDecided(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async run(signal) {
      const unsubscribe = listenAll();
      // Reports are written within ~50 ms of arrival even while a long decision or send runs
      // (a pass also flushes before deciding, so decisions always see what arrived). With
      // nothing buffered the flusher sleeps until an event buffers something: no idle polling.
      const flusher = (async () => {
        while (!signal.aborted) {
          if (!intake.pending) {
            await flushWaker.wait(o.clock, Number.POSITIVE_INFINITY, signal);
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
          const woken = await stepWaker.wait(o.clock, next - o.clock.now().getTime(), signal);
          if (woken) await nap(o.clock, debounceMs, signal);
        }
      } finally {
        await flusher;
        await unsubscribe();
        await intake.flush().catch(() => {});
        await leadership.lease.release();
      }
    },
  };
}
