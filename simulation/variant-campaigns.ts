/**
 * What the scenario variants that reshape one campaign share (`soak-takeovers.ts`,
 * `late-rollback.ts`, `deferral-budget.ts`): which campaigns are still free for one, the
 * agents of a campaign's group it may script, and how such an agent is scripted to behave.
 */
import type { Prng } from "../agent-sim/prng.js";
import type { AgentScript } from "./agent-script.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignPlan } from "./scenario.js";

/** One of `items`, drawn from `prng` (`items` is not empty). */
export function pick<T>(prng: Prng, items: readonly T[]): T {
  return items[Math.floor(prng.next() * items.length)] as T;
}

/**
 * Whether `c` is left to the scenario's gates, gate faults, other variants or operator
 * commands, or has no label group whose agents a variant could script.
 */
export function takenByOthers(s: FleetScenario, c: CampaignPlan): boolean {
  return (
    (s.gateScripts.get(c.id)?.length ?? 0) > 0 ||
    (s.gateFaults ?? []).some((f) => f.campaignId === c.id) ||
    s.soakTakeover?.campaignId === c.id ||
    s.lateRollback?.campaignId === c.id ||
    s.operator.some((o) => o.kind !== "disable" && o.campaignId === c.id) ||
    c.spec.selector?.labels?.group === undefined
  );
}

/** The agents of `c`'s label group a variant may script: of the fleet's platform, not disabled. */
export function groupMembers(s: FleetScenario, c: CampaignPlan): AgentScript[] {
  const group = c.spec.selector?.labels?.group;
  const disabled = new Set(s.operator.map((o) => (o.kind === "disable" ? o.nodeId : "")));
  return s.agents.filter(
    (a) => a.labels.group === group && a.platform === undefined && !disabled.has(a.id),
  );
}

/**
 * `a` scripted to behave for `c`: it succeeds, reinstates its previous version on a rollback,
 * takes at most 2 s a step and 15 s a restart, is online a second before `c` starts, and has
 * no first version or busy time of its own; `patch` overrides any of it.
 */
export function wellBehaved(
  a: AgentScript,
  c: CampaignPlan,
  patch: Partial<AgentScript> = {},
): AgentScript {
  const { initialVersion: _, busyUntil: __, ...rest } = a;
  return {
    ...rest,
    behaviour: "succeed",
    rollback: "reinstate",
    stepMs: Math.min(a.stepMs, 2000),
    restartMs: Math.min(a.restartMs, 15_000),
    onlineAt: Math.min(a.onlineAt, Math.max(0, c.at - 1000)),
    ...patch,
  };
}
