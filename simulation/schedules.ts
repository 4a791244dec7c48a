/**
 * The campaign schedules of a scenario: maintenance windows, exponential ramps and outside
 * health gates, given to a share of the campaigns of a share of seeds. Drawn from a stream of
 * the seed of their own, so the rest of a seed's scenario is the same with or without them.
 * Every window is a daily UTC span (the virtual clock starts at 1970-01-01 00:00 UTC), one per
 * hour of the first twelve, open for part of each hour, so runs still finish in virtual time;
 * `dst-days.ts` moves a share of the seeds to a daylight-saving day with windows in its zone.
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { CampaignSpecInput, Gate, MaintenanceWindow } from "../control/campaign/index.js";

/** How a simulated gate answers for one campaign's gate. */
export type GateScript =
  | { readonly kind: "pass" }
  /** Fails every evaluation in this batch (and holds in the others). */
  | { readonly kind: "fail_in"; readonly batch: number }
  /** Cannot be reached for `forMs` from its first evaluation in this batch, then holds. */
  | { readonly kind: "unreachable_in"; readonly batch: number; readonly forMs: number }
  /**
   * Cannot be reached for `forMs` from its first evaluation in this batch, and again for `forMs`
   * from `againAtMs` after it; holds in between and after.
   */
  | {
      readonly kind: "unreachable_twice";
      readonly batch: number;
      readonly forMs: number;
      readonly againAtMs: number;
    }
  /**
   * Holds for `passMs` from its first evaluation in this batch, then fails every evaluation,
   * each failing answer given `slowMs` after it was asked (a struggling service).
   */
  | {
      readonly kind: "fail_from";
      readonly batch: number;
      readonly passMs: number;
      readonly slowMs: number;
    };

/** A campaign spec with its schedule, and the scripts of its gates (by gate index). */
export interface Scheduled {
  readonly spec: CampaignSpecInput;
  readonly gateScripts: readonly GateScript[];
}

/** The gate grace of simulated campaigns with gates. */
export const SIM_GATE_GRACE_MS = 60_000;

function int(prng: Prng, lo: number, hi: number): number {
  return lo + Math.floor(prng.next() * (hi - lo + 1));
}

function hourlyWindows(prng: Prng): MaintenanceWindow[] {
  const open = int(prng, 15, 45);
  const from = int(prng, 0, 60 - open);
  const all = [0, 1, 2, 3, 4, 5, 6];
  return Array.from({ length: 12 }, (_, h) => ({
    days: all,
    startMinute: h * 60 + from,
    endMinute: h * 60 + from + open,
    timeZone: "UTC",
  }));
}

function gateScript(prng: Prng): GateScript {
  const roll = prng.next();
  if (roll < 0.5) return { kind: "pass" };
  if (roll < 0.8) return { kind: "fail_in", batch: int(prng, 0, 2) };
  // Far from the grace either way, so faults do not change whether it breaches (I9).
  const forMs = prng.next() < 0.5 ? SIM_GATE_GRACE_MS / 4 : SIM_GATE_GRACE_MS * 4;
  return { kind: "unreachable_in", batch: int(prng, 0, 2), forMs };
}

/**
 * Gives campaign `index` of `seed` its schedule: about a third get windows, a quarter a ramp
 * (instead of its batches), a third one or two gates (simulated: `sim://gate/...`).
 */
export function scheduleOf(seed: number, index: number, spec: CampaignSpecInput): Scheduled {
  const prng = createPrng(deriveSeed(deriveSeed(seed, 5), index));
  let out: CampaignSpecInput = spec;
  if (prng.next() < 0.33) out = { ...out, windows: hourlyWindows(prng) };
  if (prng.next() < 0.25) {
    out = {
      ...out,
      batches: undefined,
      ramp: {
        startPerMinute: int(prng, 1, 3),
        factor: prng.next() < 0.5 ? 2 : 1.5,
        maxPerMinute: prng.next() < 0.5 ? 0 : 6,
        stepMs: int(prng, 1, 2) * 60_000,
      },
    };
  }
  const scripts: GateScript[] = [];
  if (prng.next() < 0.33) {
    const count = int(prng, 1, 2);
    const gates: Gate[] = [];
    for (let g = 0; g < count; g++) {
      gates.push({ kind: "webhook", url: `http://gate.sim/${index}/${g}` });
      scripts.push(gateScript(prng));
    }
    out = { ...out, gates, gateGraceMs: SIM_GATE_GRACE_MS };
  }
  return { spec: out, gateScripts: scripts };
}
