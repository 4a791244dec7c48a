/**
 * The simulated outside health gates: a {@link GateProbe} that answers from each campaign's
 * gate scripts (`schedules.ts`) at once, in virtual time, and records every failing answer so
 * the fleet invariant G2 can check that no batch passed over one.
 */
import type { GateOutcome } from "../control/campaign/index.js";
import type { GateContext, GateProbe } from "../control/campaign-worker/gate-runner.js";
import type { Clock } from "../control/clock.js";
import type { GateScript } from "./schedules.js";

/** An answer: its campaign, batch, gate and virtual time. */
export interface GateAnswer {
  readonly campaignId: string;
  readonly batch: number;
  readonly gate: number;
  readonly at: number;
}

/** The simulated gates of one run. */
export class SimGates implements GateProbe {
  /** Every failing answer so far, at the time it was given. */
  readonly failures: GateAnswer[] = [];
  /** Every holding answer so far. */
  readonly passes: GateAnswer[] = [];
  private readonly firstAsked = new Map<string, number>();
  private readonly watchers = new Map<string, ((at: number) => void)[]>();

  constructor(
    private readonly clock: Clock,
    private readonly scripts: ReadonlyMap<string, readonly GateScript[]>,
  ) {}

  /** The script of a campaign's gate (`pass` when it has none). */
  script(campaignId: string, gate: number): GateScript {
    return this.scripts.get(campaignId)?.[gate] ?? { kind: "pass" };
  }

  /** Calls `watch` with the time a campaign's gate is first evaluated for `batch`. */
  onFirstAsk(campaignId: string, batch: number, gate: number, watch: (at: number) => void): void {
    const key = `${campaignId}/${batch}/${gate}`;
    this.watchers.set(key, [...(this.watchers.get(key) ?? []), watch]);
  }

  async evaluate(_gate: unknown, c: GateContext, signal?: AbortSignal): Promise<GateOutcome> {
    const now = this.clock.now().getTime();
    const script = this.script(c.campaignId, c.gate);
    const key = `${c.campaignId}/${c.batch}/${c.gate}`;
    const first = this.firstAsked.get(key) ?? now;
    if (!this.firstAsked.has(key)) {
      this.firstAsked.set(key, first);
      for (const watch of this.watchers.get(key) ?? []) watch(first);
    }
    if (script.kind === "fail_in" && script.batch === c.batch) {
      this.failures.push({ campaignId: c.campaignId, batch: c.batch, gate: c.gate, at: now });
      return { status: "fail", value: "1", message: "the simulated gate fails in this batch" };
    }
    if (script.kind === "fail_from" && script.batch === c.batch && now - first >= script.passMs) {
      await this.clock.sleep(script.slowMs, signal);
      const at = this.clock.now().getTime();
      this.failures.push({ campaignId: c.campaignId, batch: c.batch, gate: c.gate, at });
      return { status: "fail", value: "1", message: "the simulated gate fails from now on" };
    }
    if (
      script.kind === "unreachable_twice" &&
      script.batch === c.batch &&
      (now - first < script.forMs ||
        (now - first >= script.againAtMs && now - first < script.againAtMs + script.forMs))
    ) {
      throw new Error("the simulated gate cannot be reached");
    }
    if (
      script.kind === "unreachable_in" &&
      script.batch === c.batch &&
      now - first < script.forMs
    ) {
      throw new Error("the simulated gate cannot be reached");
    }
    this.passes.push({ campaignId: c.campaignId, batch: c.batch, gate: c.gate, at: now });
    return { status: "pass", value: "0", message: "the simulated gate holds" };
  }
}

/**
 * G2: no batch passed over a failing answer of one of its gates given after it settled and
 * before it passed.
 */
export function gateViolations(
  gates: SimGates,
  campaigns: Iterable<{
    readonly id: string;
    readonly batches: readonly {
      readonly index: number;
      readonly state: string;
      readonly settledAt: number | undefined;
      readonly endedAt: number | undefined;
      readonly gatesAcceptedAt?: number | undefined;
    }[];
  }>,
): string[] {
  const out: string[] = [];
  for (const c of campaigns) {
    for (const b of c.batches) {
      if (b.state !== "passed" || b.settledAt === undefined || b.endedAt === undefined) continue;
      const from = Math.max(b.settledAt, (b.gatesAcceptedAt ?? Number.NEGATIVE_INFINITY) + 1);
      const bad = gates.failures.find(
        (f) => f.campaignId === c.id && f.batch === b.index && f.at >= from && f.at < b.endedAt!,
      );
      if (bad !== undefined)
        out.push(
          `G2: ${c.id} batch ${b.index + 1} passed at ${b.endedAt} over gate ${bad.gate + 1} failing at ${bad.at}`,
        );
    }
  }
  return out;
}
