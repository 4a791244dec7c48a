/**
 * The campaign worker: the imperative shell around `decide`, and each Control's loop. Every
 * Control runs one; while this process holds the leader lease, each
 * {@link CampaignWorker.step} decides the campaigns that are due (marked by an agent event
 * here, a notification from another Control, every `intervalMs` while it decides any (six
 * times as long while it decides none: `periodic-pass.ts`), or at a decision's `wakeAt`) and
 * hands what each decision committed to the outbox to its {@link Delivery}.
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
import { ENGINE_FEATURES, isConvergenceCampaignId, isFailure } from "../campaign/index.js";
import { CampaignVersionConflict, StaleLeaderError } from "../campaign-store/index.js";
import { CAMPAIGNS_CHANNEL, CONTROL_CHANNELS, FACTS_CHANNEL } from "../shared/notify-channels.js";
import { type DecisionOutcome, runDecision } from "./decision.js";
import { logDecision } from "./decision-log.js";
import { Delivery } from "./delivery.js";
import { DueQueue } from "./due-queue.js";
import { FleetLoop } from "./fleet-loop.js";
import { httpGateProbe } from "./gate-http.js";
import { GateRunner } from "./gate-runner.js";
import { EventIntake } from "./intake.js";
import { Leadership } from "./leadership.js";
import { notificationListener } from "./notifications.js";
import type { DecisionResult } from "./observer.js";
import { PeriodicPass } from "./periodic-pass.js";
import { releaseCache } from "./release-cache.js";
import { RowSightings } from "./row-sightings.js";
import type { ReportedStalls } from "./stall.js";
import { SteppedAside } from "./stepped-aside.js";
import { TrackedCampaigns } from "./tracked-campaigns.js";
import { Waker } from "./waker.js";
import type { CampaignWorker, CampaignWorkerOptions } from "./worker-api.js";
import { runWorkerLoop } from "./worker-loop.js";

export type { CampaignWorker, CampaignWorkerOptions } from "./worker-api.js";

import { WorkingCopies } from "./working-copy.js";

/** Creates the worker; it does nothing until {@link CampaignWorker.step} or `run`. */
export function createCampaignWorker(o: CampaignWorkerOptions): CampaignWorker {
  const log = o.log.child({ component: "campaign-worker" });
  const ttl = o.leaseTtlMs ?? Math.min(15_000, Math.max(3000, 3 * o.intervalMs));
  const debounceMs = o.debounceMs ?? 20;
  const resendAfterMs = o.resendAfterMs ?? 30_000;
  const engineFeatures = o.engineFeatures ?? ENGINE_FEATURES;
  const leadership = new Leadership(
    o.store.lease({ holder: o.holder, ttlMs: ttl, engineFeatures }),
    ttl,
  );
  const due = new DueQueue();
  const tracked = new TrackedCampaigns();
  /** When this process last heard from a node whose stream ended (epoch ms). */
  const lastHeard = new Map<string, number>();
  const rowSightings = new RowSightings();
  const listeners = new Set<(campaignId: string) => void>();
  const copies = new WorkingCopies(o.holder);
  const periodic = new PeriodicPass(o.intervalMs);
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
    campaignOfNode: (nodeId) => tracked.campaignOf(nodeId),
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
    campaignOfNode: (nodeId) => tracked.campaignOf(nodeId),
    tracks: (campaignId) => tracked.has(campaignId),
    copies,
    due,
    delivery,
    wake,
    cutOff: (nodeId) =>
      o.gateway.cutOff?.(nodeId, "node revoked or reset by an administrator: enroll again"),
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
  /** The stalls reported while this process leads (`stall.ts`). */
  const stalls: ReportedStalls = new Map();
  const aside = new SteppedAside(o.observer, log, engineFeatures);
  const deps = {
    stalls,
    engineFeatures,
    compareFullJudging: o.compareFullJudging,
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
      rowSeenMs: (nodeId: string, lastSeen: number, now: number) =>
        rowSightings.seenMs(nodeId, lastSeen, now),
    },
    release: releaseCache(o.store),
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
    tracked.untrack(campaignId);
    due.forget(campaignId);
    copies.forget(campaignId);
  };

  /** Drops what this process knew as leader (taking or losing the lease). */
  const forgetAll = () => {
    for (const id of stalls.keys()) o.observer?.stalled?.(id, false);
    stalls.clear();
    aside.clear();
    for (const id of tracked.ids()) untrack(id);
    copies.clear();
    due.reset();
    gates.clear();
    rowSightings.clear();
  };

  /**
   * Steps aside from a campaign recording engine features this Control lacks: it is neither
   * decided nor tracked (its agents' reports do not wake it; the periodic pass looks at it
   * again), and it is logged once while this process leads.
   */
  const stepAside = (campaignId: string, features: readonly string[]) => {
    stalls.delete(campaignId);
    o.observer?.stalled?.(campaignId, false);
    gates.want(campaignId, undefined, o.clock.now().getTime());
    untrack(campaignId);
    aside.enter(campaignId, features);
  };

  const record = (campaignId: string, out: DecisionOutcome) => {
    if (out.steppedAside !== undefined) {
      stepAside(campaignId, out.steppedAside);
      return;
    }
    aside.leave(campaignId);
    gates.want(campaignId, out.finished ? undefined : out.campaign, o.clock.now().getTime());
    // A convergence failure may complete a burst that halts its desired version: judge it now,
    // not at the next interval, so the halt stops the campaign's offers at once.
    if (
      isConvergenceCampaignId(campaignId) &&
      out.decision?.changes.nodes.some((n) => isFailure(n.state))
    )
      fleet?.nudge(o.clock.now().getTime());
    o.observer?.stalled?.(campaignId, out.live && !out.finished && out.stall !== undefined);
    if (!out.live || out.finished) {
      stalls.delete(campaignId);
      untrack(campaignId);
      if (out.finished) fleet?.nudge(o.clock.now().getTime());
    } else {
      tracked.track(campaignId, out.nodeIds, out.campaign?.createdAt ?? 0);
      due.wakeAtTime(campaignId, out.decision?.wakeAt);
    }
    logDecision(log, campaignId, out);
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
      if (out.steppedAside !== undefined) {
        // Not decided: neither a decision to count nor one to tell the listeners of.
        record(campaignId, out);
        return true;
      }
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
    if (periodic.take(now, tracked.any)) due.markAllDue();
    const live = async () => {
      const ids = await o.store.liveCampaignIds();
      aside.prune(ids);
      return ids;
    };
    for (const id of await due.take(now, live)) {
      if (!(await decideOne(id))) return false;
    }
    gates.tick(o.clock.now().getTime());
    return (await fleet?.run(now, (id) => due.markDue(id))) ?? true;
  };

  const step = async (): Promise<{ next: number; busy: boolean }> => {
    const now = o.clock.now().getTime();
    let failed = false;
    try {
      const change = await leadership.tick(now, o.clock.monotonicMs?.());
      const clockStep = leadership.takeStep();
      if (clockStep !== undefined) {
        log.warn(
          { stepMs: clockStep.ms },
          "the wall clock stepped forward: no time passed for the nodes, so every deadline counts a full reconnect timeout from now",
        );
      }
      if (change !== "none") {
        forgetAll();
        periodic.reset();
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
        periodic.nextAt(tracked.any),
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
    run: (signal) =>
      runWorkerLoop(
        {
          clock: o.clock,
          step,
          reports: intake,
          flushWaker,
          reportFlushFailed: (error) =>
            log.warn({ err: error }, "could not write agent reports; trying again in 1 s"),
          stepWaker,
          debounceMs,
          listen: listenAll,
          release: () => leadership.lease.release(),
        },
        signal,
      ),
  };
}
