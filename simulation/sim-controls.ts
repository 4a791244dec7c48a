/**
 * The simulated Control processes of a run: each is a real campaign worker (and so the real
 * engine and lease) under a holder name of its own, stepped by the run at the virtual time it
 * asks for. A crashed process stays in the list, dead; its successor is a new process.
 */
import type { CampaignWorker } from "../control/campaign-worker/worker.js";
import type { Clock } from "../control/clock.js";
import type { ManualClock } from "../control/manual-clock.js";

/** How soon a Control steps after something it should see happened (the worker's debounce). */
export const DEBOUNCE_MS = 20;

/** One simulated Control process. */
export interface SimControl {
  readonly holder: string;
  readonly worker: CampaignWorker;
  /** Its own clock (off the reference clock when the run's Controls' clocks disagree). */
  readonly clock: Clock;
  /** Stops the worker listening to the fleet's events. */
  readonly unlisten: () => void;
  /** The virtual time of its next step. */
  nextAt: number;
  alive: boolean;
}

/** Every Control process of a run, in the order they started. */
export class SimControls {
  /** Every process started so far, the dead ones included, in start order. */
  readonly all: SimControl[] = [];
  private started = 0;

  constructor(private readonly clock: ManualClock) {}

  /**
   * Starts the next process, `control-1`, `control-2`, …: its worker from `createWorker`,
   * listening at once and due to step now. Returns its holder name.
   */
  start(createWorker: (holder: string) => CampaignWorker, clock: Clock = this.clock): string {
    const holder = `control-${++this.started}`;
    const worker = createWorker(holder);
    this.all.push({
      holder,
      worker,
      clock,
      unlisten: worker.listen(),
      nextAt: this.clock.ms,
      alive: true,
    });
    return holder;
  }

  /** Whether any process is running. */
  anyAlive(): boolean {
    return this.all.some((c) => c.alive);
  }

  /** The running processes. */
  alive(): SimControl[] {
    return this.all.filter((c) => c.alive);
  }

  /** Brings every running process's next step forward to within {@link DEBOUNCE_MS}. */
  kick(): void {
    for (const c of this.all)
      if (c.alive) c.nextAt = Math.min(c.nextAt, this.clock.ms + DEBOUNCE_MS);
  }

  /** Wakes every running process for `campaignId`, then {@link kick}s them. */
  wake(campaignId: string): void {
    for (const c of this.all) if (c.alive) c.worker.wake(campaignId);
    this.kick();
  }

  /**
   * Kills the leader (the running process holding the lease, else the first running one): it
   * stops listening and never steps again. Returns it, or undefined when none runs.
   */
  killLeader(): SimControl | undefined {
    const leader =
      this.all.find((c) => c.alive && c.worker.lease.epoch !== undefined) ??
      this.all.find((c) => c.alive);
    if (leader === undefined) return undefined;
    leader.alive = false;
    leader.unlisten();
    return leader;
  }

  /** Stops every process listening (the end of a run). */
  unlistenAll(): void {
    for (const c of this.all) c.unlisten();
  }
}
