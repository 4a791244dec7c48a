/**
 * Control's takeover across a node that reverts during its batch's soak. In a share of the
 * scenarios that are not calm, one campaign without gates, operator commands or a pool budget
 * below 100 % becomes
 * one batch of 100 % soaking for {@link SOAK_MS}, over well-behaved agents of its group (online
 * before it starts, fast restarts), of which just enough to breach its threshold are
 * `late_revert`: each comes back on the target, then reverts by itself during the soak
 * (`late-revert.ts`). Without faults Control sees the reverts (a new boot on the old version)
 * and the batch breaches. With faults, every Control process crashes
 * {@link SoakTakeover.leadMs} before the first revert and stays down until the soak is over,
 * so the new leader's first look at the batch finds every node settled on the target before
 * the outage, its soak done, and the reverted nodes' streams not back yet. A leader that passed
 * the batch on that pre-outage evidence would complete the campaign over true failures: O2
 * (judged from what each agent ran when the batch passed) breaks.
 *
 * Drawn from a seed stream of its own, so the rest of a seed's scenario is the same with or
 * without it.
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { AgentScript } from "./agent-script.js";
import { crashAll } from "./fault-events.js";
import type { LATE_REVERT_AFTER_MS } from "./late-revert.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignPlan } from "./scenario.js";
import type { SimWorld } from "./sim-world.js";
import { groupMembers, pick, takenByOthers, wellBehaved } from "./variant-campaigns.js";

/** The share of the eligible scenarios that get the takeover. */
const SHARE = 0.6;
/** The soak of the campaign's one batch. */
export const SOAK_MS = 120_000;
/** Control crashes this long before the first revert. */
const LEAD_MS = 2000;
/**
 * Control stays down this long: from before the revert until after the soak, even for a batch
 * that settled {@link LATE_REVERT_AFTER_MS} plus a minute after the first reverting node came
 * back (its config grace included).
 */
const DOWN_MS = SOAK_MS + LEAD_MS + 60_000;

/** Whether `c` is left to the scenario's other takeovers or commands. */
function taken(s: FleetScenario, c: CampaignPlan): boolean {
  // Its nodes are offered together only when no pool budget holds them back.
  return takenByOthers(s, c) || c.spec.disruptionBudgetPercent !== 100;
}

/** `s` with, for a share of its seeds, the takeover across a late revert (the file's TSDoc). */
export function withSoakTakeovers(s: FleetScenario): FleetScenario {
  if (s.calm || s.edge || s.campaigns.length === 0) return s;
  const prng = createPrng(deriveSeed(s.seed, 31));
  if (prng.next() >= SHARE) return s;
  const free = s.campaigns.filter((c) => !taken(s, c));
  if (free.length === 0) return s;
  const c = pick(prng, free);
  const members = groupMembers(s, c);
  const threshold = c.spec.failureThresholdPercent;
  if (threshold === undefined) return s;
  const reverting = Math.floor((threshold * members.length) / 100) + 1;
  if (members.length < 2 || reverting > members.length) return s;
  const chosen = new Set<string>();
  while (chosen.size < reverting) chosen.add(pick(prng, members).id);
  const agents = s.agents.map((a): AgentScript => {
    if (!members.includes(a)) return a;
    return wellBehaved(a, c, {
      ...(chosen.has(a.id) ? { behaviour: "late_revert" } : {}),
      ...(a.busyUntil === undefined ? {} : { busyUntil: a.busyUntil }),
    });
  });
  const spec = {
    ...c.spec,
    batches: [{ percent: 100, minDurationMs: 0 }],
    ramp: undefined,
    windows: undefined,
    soakMs: SOAK_MS,
    concurrency: 0,
  };
  return {
    ...s,
    agents,
    campaigns: s.campaigns.map((x) => (x === c ? { ...x, spec } : x)),
    ...(s.faults.length === 0
      ? {}
      : { soakTakeover: { campaignId: c.id, leadMs: LEAD_MS, downMs: DOWN_MS } }),
  };
}

/**
 * Puts the scenario's takeover on `world`: the first `late_revert` agent to schedule its revert
 * makes every Control process crash `leadMs` before it, down for `downMs`. Nothing without one.
 */
export function scheduleSoakTakeover(world: SimWorld): void {
  const takeover = world.scenario.soakTakeover;
  if (takeover === undefined) return;
  let armed = true;
  world.fleet.onLateRevert = (nodeId, at) => {
    if (!armed) return;
    armed = false;
    world.say(`${nodeId} will revert at ${at}: Control goes down ${takeover.leadMs} ms before`);
    world.queue.at(at - takeover.leadMs, () => crashAll(world, takeover.downMs));
  };
}
