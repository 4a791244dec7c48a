/**
 * Controls whose wall clocks disagree (registry generation 3): in three of ten seeds with faults
 * that are not calm nor on a breach's edge, every Control process runs on a clock of its own, off
 * the reference clock (the database's and the agents') by a seeded offset of up to
 * {@link MAX_OFFSET_MS} either way, so two Controls disagree by up to twice that; in half of them
 * one Control's clock also steps, at a seeded time, by up to {@link MAX_STEP_MS} either way
 * (an NTP correction). The monotonic clock never steps. Each Control judges its deadlines, windows,
 * durations and soaks on its own clock; the invariants judge them on the reference clock with the
 * tolerance docs/decisions.md states ("Controls may disagree by seconds").
 *
 * Drawn from a seed stream of its own, so the rest of a seed's scenario is the same without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { Clock } from "../control/clock.js";
import type { ManualClock } from "../control/manual-clock.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { ClockSkew } from "./scenario.js";

/** The most one Control's clock is off the reference clock before a step. */
export const MAX_OFFSET_MS = 5000;
/** The most one step moves a Control's clock. */
export const MAX_STEP_MS = 5000;
/**
 * How far a Control's clock may be off the reference clock in a run with `skew`: what the
 * invariants that compare a Control's stamp or deadline with the reference clock allow
 * (0 without skew: every Control runs on the reference clock).
 */
export function clockToleranceMs(skew: ClockSkew | undefined): number {
  return skew === undefined ? 0 : MAX_OFFSET_MS + MAX_STEP_MS;
}

/** The share of the eligible scenarios whose Controls' clocks disagree. */
const SHARE = 0.3;
/** Offsets drawn: one per Control process started, in start order (later ones reuse them). */
const OFFSETS = 16;

/** `s` with, for a share of its seeds, Controls whose clocks disagree (and one that steps). */
export function withClockSkew(s: FleetScenario): FleetScenario {
  if (s.faults.length === 0 || s.calm || s.edge) return s;
  const prng = createPrng(deriveSeed(s.seed, 65));
  if (prng.next() >= SHARE) return s;
  const signed = (max: number) => Math.round((prng.next() * 2 - 1) * max);
  const offsetsMs = Array.from({ length: OFFSETS }, () => signed(MAX_OFFSET_MS));
  const stepped = prng.next() < 0.5;
  const control = Math.floor(prng.next() * 3);
  const at = (s.originMs ?? 0) + 4000 + Math.floor(prng.next() * 15 * 60_000);
  const byMs = signed(MAX_STEP_MS);
  return {
    ...s,
    clockSkew: stepped ? { offsetsMs, step: { control, at, byMs } } : { offsetsMs },
  };
}

/**
 * The clock of the `index`-th Control started (0-based) under `skew`: the reference clock off by
 * its offset, and by the step from the step's time on. Its monotonic time is the reference's.
 */
export function skewedClock(base: ManualClock, skew: ClockSkew, index: number): Clock {
  const offset = skew.offsetsMs[index % skew.offsetsMs.length] ?? 0;
  const step = skew.step?.control === index ? skew.step : undefined;
  const offsetAt = (ms: number) => offset + (step !== undefined && ms >= step.at ? step.byMs : 0);
  return {
    now: () => new Date(base.ms + offsetAt(base.ms)),
    sleep: (ms, signal) => base.sleep(ms, signal),
    monotonicMs: () => base.monotonicMs(),
  };
}
