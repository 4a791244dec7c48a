/**
 * The fleet and schedule variants that reach the engine's rarer rules, each for a share of the
 * seeds and drawn from a seed stream of its own (so the rest of a seed's scenario is the same
 * with or without them):
 *
 * - mixed platforms: a share of the agents run `linux-arm64`, a platform the target release
 *   carries no artifact for (they are skipped, never offered, never failures: O7);
 * - agents on a newer, unregistered version with confirmed sequence 0, enrolling late in a
 *   desired-version scenario (convergence must never move them back: O5);
 * - hopeless campaigns: in a desired-version scenario, one campaign with a threshold of 100 %
 *   over a group whose agents all refuse or fail (it completes, and must record no desired
 *   version: O8);
 * - ramps too slow for the batch limit, on a campaign or on a plan's template (the start or the
 *   group is refused; no campaign has more batches than the policy allows: O10);
 * - gates unreachable for long on a campaign that pauses on a breach, so the operator's resume
 *   meets a gate still unreachable (a fresh grace after it: O11).
 *
 * Calm scenarios (compared by I9) get only the timing-free variants (platforms, slow ramps).
 */
import { createPrng, deriveSeed, type Prng } from "../agent-sim/prng.js";
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignPlan } from "./scenario.js";
import type { GateScript } from "./schedules.js";

/** The platform the target release lacks. */
export const FOREIGN_PLATFORM = "linux-arm64";
/** The version the late agents of the newer-version variant run: no release registers it. */
export const UNREGISTERED_VERSION = "9.0.0";
/** How long a long-unreachable gate cannot be reached from its first evaluation. */
const LONG_UNREACHABLE_MS = 30 * 60_000;

/** A ramp of one node a minute growing by 1 % a step: more steps than any batch limit allows. */
const SLOW_RAMP = { startPerMinute: 1, factor: 1.01, maxPerMinute: 0, stepMs: 60_000 };

function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[Math.floor(prng.next() * items.length)] as T;
}

/** `s` with its variants (none for most seeds; see the file's TSDoc). */
export function withFleetVariants(s: FleetScenario): FleetScenario {
  const prng = createPrng(deriveSeed(s.seed, 11));
  let agents: readonly AgentScript[] = s.agents;
  let campaigns: readonly CampaignPlan[] = s.campaigns;
  let rollout = s.rollout;
  const gateScripts = new Map(s.gateScripts);
  if (prng.next() < 0.2 && !s.edge) {
    agents = agents.map((a) => (prng.next() < 0.25 ? { ...a, platform: FOREIGN_PLATFORM } : a));
  }
  if (rollout.kind === "desired" && prng.next() < 0.5) {
    const last = Math.max(0, ...campaigns.map((c) => c.at));
    const late = agents.filter((a) => a.onlineAt > last && a.platform === undefined);
    if (late.length > 0) {
      const chosen = pick(prng, late).id;
      agents = agents.map((a) =>
        a.id === chosen ? { ...a, initialVersion: UNREGISTERED_VERSION, behaviour: "succeed" } : a,
      );
    }
  }
  if (rollout.kind === "desired" && campaigns.length > 0 && prng.next() < 0.3) {
    const hopeless = pick(prng, campaigns);
    const group = hopeless.spec.selector?.labels?.group;
    agents = agents.map((a) =>
      a.labels.group === group && a.onlineAt <= hopeless.at
        ? { ...a, behaviour: pick(prng, ["refuse", "fail"] as const) }
        : a,
    );
    campaigns = campaigns.map((c) =>
      c === hopeless ? { ...c, spec: { ...c.spec, failureThresholdPercent: 100 } } : c,
    );
  }
  if (prng.next() < 0.08 && campaigns.length > 0) {
    const slow = pick(prng, campaigns);
    campaigns = campaigns.map((c) =>
      c === slow ? { ...c, spec: { ...c.spec, batches: undefined, ramp: SLOW_RAMP } } : c,
    );
  }
  if (rollout.plan !== undefined && prng.next() < 0.2) {
    const template = { ...rollout.plan.template, batches: undefined, ramp: SLOW_RAMP };
    rollout = { ...rollout, plan: { ...rollout.plan, template } };
  }
  if (!s.calm) {
    for (const c of campaigns) {
      const scripts = gateScripts.get(c.id);
      if (scripts === undefined || prng.next() >= 0.5) continue;
      const long: GateScript = { kind: "unreachable_in", batch: 0, forMs: LONG_UNREACHABLE_MS };
      gateScripts.set(c.id, [long, ...scripts.slice(1)]);
      campaigns = campaigns.map((x) =>
        x === c ? { ...x, spec: { ...x.spec, onBreach: "pause" as const } } : x,
      );
    }
  }
  return { ...s, agents, campaigns, rollout, gateScripts };
}
