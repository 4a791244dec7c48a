/**
 * When the leader runs its fleet passes (convergence, then plans): every `intervalMs`, soon
 * after a campaign finished (a plan's group may be done, a desired version recorded), at a
 * plan's wait end, and at most once a second after node connections (a node that comes
 * online behind its desired version converges without waiting a whole interval). Time comes
 * from the caller (the worker's Clock).
 */
import { type AdmissionRules, DEFAULT_POLICY } from "../campaign/index.js";
import type { LeaderLease, OfferRelease } from "../campaign-store/index.js";
import { type FleetStore, StaleLeaderError } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import { convergencePass } from "./convergence.js";
import type { WorkerGateway } from "./facts.js";
import { planPass } from "./plan-runner.js";

/** The fleet options of the campaign worker. */
export interface FleetOptions {
  readonly store: FleetStore;
  /** How often the fleet passes run without a reason to run sooner (config worker.convergenceIntervalMs). */
  readonly intervalMs: number;
  /** Told of each desired version whose convergence a burst of failures halted (metrics). */
  readonly onHalted?: (desiredId: string) => void;
  /**
   * The policy and `agent.maxVersion` the passes' starts are admitted under, as an
   * administrator's start is (default: the policy's defaults, no maximum version).
   */
  readonly rules?: AdmissionRules;
  /**
   * Why the release channel's TUF targets (config `tuf.dir`) do not list `version` at
   * `sequence`, or undefined when they do; absent: no channel is configured.
   */
  readonly unlisted?:
    | ((version: string, sequence: number) => Promise<string | undefined>)
    | undefined;
}

/** What the loop needs of the worker. */
export interface FleetLoopDeps {
  readonly options: FleetOptions;
  readonly lease: LeaderLease;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  readonly self: string;
  readonly release: (version: string) => Promise<OfferRelease | undefined>;
}

const DEFAULT_RULES: AdmissionRules = { policy: DEFAULT_POLICY, maxVersion: undefined };

/** Nudges after node connections run the passes at most this often. */
const NUDGE_GAP_MS = 1000;

/** The schedule and the passes; see the file's TSDoc. */
export class FleetLoop {
  private next = 0;
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly d: FleetLoopDeps) {}

  /** When the passes are due next (epoch ms). */
  get nextAt(): number {
    return this.next;
  }

  /** Runs the passes soon (at most once a second for this reason). */
  nudge(now: number): void {
    this.next = Math.min(this.next, Math.max(now, this.last + NUDGE_GAP_MS));
  }

  /** Runs the passes at the next turn (leadership changed hands). */
  reset(): void {
    this.next = 0;
  }

  /**
   * Runs the passes when due; `started` is told of each campaign they started or commanded
   * (a halt's abort), to decide it now.
   * @returns false when the lease was lost.
   */
  async run(now: number, started: (campaignId: string) => void): Promise<boolean> {
    if (now < this.next) return true;
    this.last = now;
    this.next = now + this.d.options.intervalMs;
    const at = this.d.clock.now();
    const deps = {
      lease: this.d.lease,
      gateway: this.d.gateway,
      self: this.d.self,
      release: this.d.release,
      rules: this.d.options.rules ?? DEFAULT_RULES,
      unlisted: this.d.options.unlisted,
    };
    try {
      const conv = await this.d.options.store.transaction((tx) => convergencePass(deps, tx, at));
      for (const h of conv.halted) {
        this.d.log.warn({ desiredId: h.desiredId, reason: h.message }, "convergence halted");
        this.d.options.onHalted?.(h.desiredId);
      }
      const plans = await this.d.options.store.transaction((tx) => planPass(deps, tx, at));
      for (const id of [...conv.started, ...conv.aborted, ...plans.started]) started(id);
      if (conv.started.length + plans.started.length > 0 || conv.recorded.length > 0) {
        this.d.log.info(
          { convergence: conv.started, plans: plans.started, desired: conv.recorded },
          "fleet pass",
        );
      }
      if (plans.wakeAt !== undefined) this.next = Math.min(this.next, plans.wakeAt);
    } catch (error) {
      if (error instanceof StaleLeaderError) return false;
      this.d.log.warn({ err: error }, "fleet pass failed; retrying later");
      this.next = now + Math.min(this.d.options.intervalMs, 5000);
    }
    return true;
  }
}
