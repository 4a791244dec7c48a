/**
 * The simulated outside health gates: a {@link GateProbe} that answers from each campaign's
 * gate scripts (`schedules.ts`) at once, in virtual time, and records every failing answer so
 * the fleet invariant G2 can check that no batch passed over one.
 */
import type { GateOutcome } from "../control/campaign/index.js";
import type { GateContext, GateProbe } from "../control/campaign-worker/gate-runner.js";
import type { Clock } from "../control/clock.js";
import type { GateScript } from "./schedules.js";

/** A failing answer: its campaign, batch, gate and virtual time. */
export interface FailedAnswer {
  readonly campaignId: string;
  readonly batch: number;
  readonly gate: number;
  readonly at: number;
}

/** The simulated gates of one run. */
export class SimGates implements GateProbe {
  /** Every failing answer so far. */
  readonly failures: FailedAnswer[] = [];
  private readonly firstAsked = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly scripts: ReadonlyMap<string, readonly GateScript[]>,
  ) {}

  async evaluate(_gate: unknown, c: GateContext): Promise<GateOutcome> {
    const now = this.clock.now().getTime();
    const script = this.scripts.get(c.campaignId)?.[c.gate] ?? { kind: "pass" };
    const key = `${c.campaignId}/${c.batch}/${c.gate}`;
    const first = this.firstAsked.get(key) ?? now;
    this.firstAsked.set(key, first);
    if (script.kind === "fail_in" && script.batch === c.batch) {
      this.failures.push({ campaignId: c.campaignId, batch: c.batch, gate: c.gate, at: now });
      return { status: "fail", value: "1", message: "the simulated gate fails in this batch" };
    }
    if (
      script.kind === "unreachable_in" &&
      script.batch === c.batch &&
      now - first < script.forMs
    ) {
      throw new Error("the simulated gate cannot be reached");
    }
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
