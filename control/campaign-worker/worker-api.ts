/**
 * What a campaign worker is given and what it offers ({@link createCampaignWorker} in
 * `worker.ts` makes one).
 */
import type { CampaignStore } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import type { Delivery } from "./delivery.js";
import type { WorkerGateway } from "./facts.js";
import type { FleetOptions } from "./fleet-loop.js";
import type { GateProbe } from "./gate-runner.js";
import type { Leadership } from "./leadership.js";
import type { WorkerObserver } from "./observer.js";

/** Options of `createCampaignWorker`. */
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
  /**
   * Decide every incrementally judged decision in full too and tell each difference here (the
   * simulation's check that incremental judging changes nothing); default: decided once.
   */
  readonly compareFullJudging?: (campaignId: string, difference: string) => void;
  /** Time between two evaluations of one gate (default: intervalMs). */
  readonly gateIntervalMs?: number;
  /** An evaluation taking longer counts as unreachable (default 10 s). */
  readonly gateTimeoutMs?: number;
  /**
   * The engine features this Control leads (default: this release's `ENGINE_FEATURES`); a
   * campaign recording any other is stepped aside from (`engine-features.ts`). A test names
   * fewer to stand for an older release.
   */
  readonly engineFeatures?: readonly string[];
}

/** A campaign worker; see `createCampaignWorker`. */
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
