/**
 * Evaluates the outside health gates of the campaigns this worker decides, off the worker's
 * loop: after each decision the worker tells the runner where the campaign stands
 * ({@link GateRunner.want}); while its current batch soaks (`gatesWanted`) each gate is
 * evaluated every `intervalMs`, each evaluation bounded by `timeoutMs` on the injected Clock
 * (its AbortSignal aborts the request), and each result is stored as a fact
 * (`recordGateResult`) before the campaign is marked due, so the next decision judges it.
 * A probe that throws or times out yields an `unreachable` result: the engine counts it as
 * failing once the gate has been unreachable for the campaign's gate grace.
 */
import { type CampaignState, type Gate, type GateOutcome, gatesWanted } from "../campaign/index.js";
import type { CampaignStore } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";

/** What a gate is evaluated for. */
export interface GateContext {
  readonly campaignId: string;
  /** Index of the current batch, from 0 (a webhook's body numbers it from 1). */
  readonly batch: number;
  /** Index of the gate in the campaign's spec, from 0 (a webhook's body numbers it from 1). */
  readonly gate: number;
  readonly targetVersion: string;
}

/** Evaluates one gate (the I/O); rejects, or aborts with `signal`, when it cannot. */
export interface GateProbe {
  evaluate(gate: Gate, context: GateContext, signal: AbortSignal): Promise<GateOutcome>;
}

/** Options of {@link GateRunner}. */
export interface GateRunnerOptions {
  readonly store: Pick<CampaignStore, "recordGateResult">;
  readonly clock: Clock;
  readonly probe: GateProbe;
  readonly log: Logger;
  /** Time between two evaluations of one gate (from the end of the first). */
  readonly intervalMs: number;
  /** An evaluation that takes longer is aborted and stored as unreachable. */
  readonly timeoutMs: number;
  /** Called with the campaign id after a result was stored. */
  readonly stored: (campaignId: string) => void;
}

interface Watched {
  readonly campaign: CampaignState;
  /** When each gate is due next (epoch ms). */
  readonly due: number[];
  readonly running: Set<number>;
  readonly abort: AbortController;
}

/** See the file's TSDoc. */
export class GateRunner {
  private readonly watched = new Map<string, Watched>();

  constructor(private readonly o: GateRunnerOptions) {}

  /**
   * Where a campaign stands after a decision (undefined: finished or gone). Its gates are
   * evaluated while `gatesWanted` holds, for its current batch; a new batch starts over.
   */
  want(campaignId: string, campaign: CampaignState | undefined, now: number): void {
    const old = this.watched.get(campaignId);
    if (campaign === undefined || !gatesWanted(campaign)) {
      if (old !== undefined) this.drop(campaignId);
      return;
    }
    const batch = campaign.batches[campaign.currentBatch];
    const was = old?.campaign.batches[old.campaign.currentBatch];
    if (
      old !== undefined &&
      old.campaign.currentBatch === campaign.currentBatch &&
      was?.gatesAcceptedAt === batch?.gatesAcceptedAt
    ) {
      this.watched.set(campaignId, { ...old, campaign });
      return;
    }
    if (old !== undefined) this.drop(campaignId);
    this.watched.set(campaignId, {
      campaign,
      due: (campaign.spec.gates ?? []).map(() => now),
      running: new Set(),
      abort: new AbortController(),
    });
  }

  /** Starts every evaluation due at `now` (never awaited by the caller). */
  tick(now: number): void {
    for (const [campaignId, w] of this.watched) {
      const gates = w.campaign.spec.gates ?? [];
      gates.forEach((gate, i) => {
        if (w.running.has(i) || (w.due[i] ?? 0) > now) return;
        w.running.add(i);
        void this.evaluate(campaignId, w, gate, i);
      });
    }
  }

  /** The earliest time an evaluation is due, if any (running ones excluded). */
  get nextDue(): number | undefined {
    let next: number | undefined;
    for (const w of this.watched.values()) {
      w.due.forEach((t, i) => {
        if (!w.running.has(i) && (next === undefined || t < next)) next = t;
      });
    }
    return next;
  }

  /** Stops watching every campaign, aborting evaluations in progress. */
  clear(): void {
    for (const id of [...this.watched.keys()]) this.drop(id);
  }

  private drop(campaignId: string): void {
    this.watched.get(campaignId)?.abort.abort(new Error("no longer evaluated"));
    this.watched.delete(campaignId);
  }

  private async evaluate(campaignId: string, w: Watched, gate: Gate, index: number) {
    const c = w.campaign;
    const batch = c.batches[c.currentBatch];
    const timeout = new AbortController();
    const signal = AbortSignal.any([w.abort.signal, timeout.signal]);
    const timer = new AbortController();
    void this.o.clock
      .sleep(this.o.timeoutMs, timer.signal)
      .then(() => timeout.abort(new Error(`no answer within ${this.o.timeoutMs} ms`)))
      .catch(() => {});
    // The answer is evidence of the moment it was asked for, not of when it came back: a
    // batch that settles again while the query runs never passes on it (G1).
    const askedAt = this.o.clock.now();
    let outcome: GateOutcome;
    try {
      outcome = await this.o.probe.evaluate(
        gate,
        { campaignId, batch: c.currentBatch, gate: index, targetVersion: c.spec.targetVersion },
        signal,
      );
    } catch (error) {
      const why = signal.aborted ? signal.reason : error;
      outcome = {
        status: "unreachable",
        value: "unreachable",
        message: why instanceof Error ? why.message : String(why),
      };
    } finally {
      timer.abort();
    }
    try {
      if (w.abort.signal.aborted) return;
      await this.o.store.recordGateResult({
        campaignId,
        batch: c.currentBatch,
        gate: index,
        status: outcome.status,
        at: askedAt,
        value: outcome.value,
        message: outcome.message,
        keepFailuresAfter: batch?.gatesAcceptedAt ?? 0,
      });
      this.o.stored(campaignId);
    } catch (error) {
      this.o.log.warn({ campaignId, gate: index, err: error }, "could not store a gate result");
    } finally {
      w.running.delete(index);
      w.due[index] = this.o.clock.now().getTime() + this.o.intervalMs;
    }
  }
}
