/**
 * Scripted behaviours (SPEC §6) and their deterministic assignment to a fleet.
 *
 * How an agent reacts to an upgrade is one exclusive choice, so fractions add up
 * predictably (`--refuse-rate 0.1 --fail-rate 0.05` over 100 agents gives exactly 10
 * refusers and 5 failers, never one agent counted twice). Connectivity behaviours
 * (offline at start, flapping, silent) and deferring (busy nodes) are drawn independently of
 * it and of each other.
 */
import { createPrng, deriveSeed, shuffledIndexes } from "./prng.js";

/**
 * How an agent reacts to `agent_upgrade`:
 * - `succeed`: applies it, restarts after the restart delay, comes back on the new version.
 * - `refuse`: answers REFUSED (`agent_refused`).
 * - `fail`: goes as far as APPLYING, then FAILED (`apply_failed`).
 * - `no-return`: reports RESTARTING and never reconnects (until `goOnline()`).
 * - `revert`: restarts and comes back on the old version.
 * - `config-fail`: comes back on the new version, then reports ConfigStatus `ok: false`.
 * - `no-upgrade-cap`: does not offer the `upgrade.v1` capability (and refuses upgrades
 *   with `upgrade_unsupported` should one arrive anyway).
 * - `health-fail`: applies it and restarts, but the new version fails its health check (as a
 *   real Agent's release check would): it comes back on the old version and reports FAILED
 *   `health_check_failed` naming the check, as the real Agent's supervisor does.
 */
export type UpgradeReaction =
  | "succeed"
  | "refuse"
  | "fail"
  | "no-return"
  | "revert"
  | "config-fail"
  | "no-upgrade-cap"
  | "health-fail";

/** Everything scripted about one agent. */
export interface AgentBehaviour {
  /** How it reacts to upgrades. */
  upgrade: UpgradeReaction;
  /** Starts offline: does not connect until `goOnline()`. */
  offline: boolean;
  /** Drops its stream periodically and reconnects (with backoff). */
  flap: boolean;
  /** Never heartbeats (the stream stays open). */
  silent: boolean;
  /**
   * A busy node: answers an upgrade DEFERRED (code `deferred`, with a reason) with the fleet's
   * `deferChance` per offer, after verifying the release and before downloading anything, as
   * the real Agent does while its update lock is held.
   */
  defer: boolean;
}

/** The default behaviour: a well-behaved, online agent. */
export const DEFAULT_BEHAVIOUR: Readonly<AgentBehaviour> = Object.freeze({
  upgrade: "succeed",
  offline: false,
  flap: false,
  silent: false,
  defer: false,
});

/** Fleet fractions, each in [0, 1]. The upgrade reactions together must not exceed 1. */
export interface BehaviourRates {
  refuse?: number;
  fail?: number;
  noReturn?: number;
  revert?: number;
  configFail?: number;
  noUpgradeCap?: number;
  healthFail?: number;
  offline?: number;
  flap?: number;
  silent?: number;
  defer?: number;
}

const REACTION_RATES: readonly [keyof BehaviourRates, UpgradeReaction][] = [
  ["refuse", "refuse"],
  ["fail", "fail"],
  ["noReturn", "no-return"],
  ["revert", "revert"],
  ["configFail", "config-fail"],
  ["noUpgradeCap", "no-upgrade-cap"],
  // Last, so the agents the earlier reactions pick for a seed stay the same.
  ["healthFail", "health-fail"],
];

// "defer" last, so the agents the earlier flags pick for a seed stay the same.
const FLAG_RATES: readonly ("offline" | "flap" | "silent" | "defer")[] = [
  "offline",
  "flap",
  "silent",
  "defer",
];

/**
 * Checks every rate is a number in [0, 1] and the upgrade reactions sum to at most 1.
 * Returns a one-line problem naming the rate, or undefined when valid.
 */
export function validateRates(rates: BehaviourRates): string | undefined {
  let sum = 0;
  for (const [key, value] of Object.entries(rates)) {
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
      return `${key} rate must be a number between 0 and 1, got ${String(value)}`;
    }
  }
  for (const [key] of REACTION_RATES) sum += rates[key] ?? 0;
  if (sum > 1 + 1e-9) {
    return `the upgrade reaction rates (refuse, fail, no-return, revert, config-fail, no-upgrade-cap, health-fail) add up to ${sum}, more than 1`;
  }
  return undefined;
}

/**
 * Assigns behaviours to `count` agents. Deterministic: the same count, rates and seed
 * always give the same agents the same behaviours. Each rate selects exactly
 * `round(rate × count)` agents (reactions capped by what is left).
 */
export function assignBehaviours(
  count: number,
  rates: BehaviourRates,
  seed: number,
): AgentBehaviour[] {
  const behaviours: AgentBehaviour[] = Array.from({ length: count }, () => ({
    ...DEFAULT_BEHAVIOUR,
  }));
  const order = shuffledIndexes(count, createPrng(deriveSeed(seed, 0)));
  let next = 0;
  for (const [key, reaction] of REACTION_RATES) {
    const n = Math.min(Math.round((rates[key] ?? 0) * count), count - next);
    for (let i = 0; i < n; i++) behaviours[order[next++]!]!.upgrade = reaction;
  }
  FLAG_RATES.forEach((key, stream) => {
    const n = Math.round((rates[key] ?? 0) * count);
    const chosen = shuffledIndexes(count, createPrng(deriveSeed(seed, stream + 1)));
    for (let i = 0; i < n; i++) behaviours[chosen[i]!]![key] = true;
  });
  return behaviours;
}
