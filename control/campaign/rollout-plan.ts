/**
 * Rollout plans (staged groups): one campaign template run over groups of nodes in order (for
 * example pools dev, staging, prod), with a wait between groups. A group starts, as an
 * ordinary campaign, only once the group before it completed and the wait elapsed; a breach
 * of a group's campaign (it rolls back, or ends rolled back, failed or aborted) halts the
 * plan. Pure: the worker reads the plan and its groups' campaigns, asks {@link nextPlanStep},
 * and applies the step ({@link applyPlanStep}), starting a group's campaign itself.
 */
import { assertNever } from "./assert-never.js";
import type { CampaignPhase } from "./model.js";
import type { CampaignSpec, Selector } from "./spec.js";

/** The `created_by` of a group's campaign starts with this, followed by the plan id. */
export const PLAN_CREATOR = "plan:";

/** One group of a plan: a name and the nodes it selects (ANDed with the template's selector). */
export interface PlanGroup {
  readonly name: string;
  readonly selector: Selector;
}

/** Where a plan stands. */
export type PlanPhase = "running" | "completed" | "halted" | "aborted";

/** How a group ended. */
export type GroupOutcome = "completed" | "empty" | "breached" | "aborted";

/** One group as stored. */
export interface GroupRecord {
  readonly name: string;
  readonly selector: Selector;
  readonly campaignId: string | undefined;
  readonly startedAt: number | undefined;
  readonly endedAt: number | undefined;
  readonly outcome: GroupOutcome | undefined;
}

/** A rollout plan as stored. */
export interface RolloutPlan {
  readonly id: string;
  /** The campaign template every group runs (its selector is each group's). */
  readonly template: CampaignSpec;
  readonly waitMs: number;
  readonly groups: readonly GroupRecord[];
  readonly phase: PlanPhase;
  /** The group being run or waited for. */
  readonly currentGroup: number;
  readonly createdAt: number;
  readonly createdBy: string;
  readonly message: string | undefined;
  readonly endedAt: number | undefined;
}

/** What a plan needs to know of its groups' campaigns. */
export interface GroupCampaign {
  readonly phase: CampaignPhase;
  readonly finishedAt: number | undefined;
}

/** What a plan does now. */
export type PlanStep =
  | { readonly kind: "none" }
  | { readonly kind: "wait"; readonly until: number }
  | { readonly kind: "start_group"; readonly group: number }
  | { readonly kind: "group_completed"; readonly group: number; readonly at: number }
  | { readonly kind: "halt"; readonly group: number; readonly message: string };

/** True for a phase in which the plan starts nothing again. */
export function isPlanEnded(phase: PlanPhase): boolean {
  switch (phase) {
    case "running":
      return false;
    case "completed":
    case "halted":
    case "aborted":
      return true;
    default:
      return assertNever(phase, "plan phase");
  }
}

/** Why a plan cannot be created, one sentence per problem; empty when it can. */
export function planViolations(groups: readonly PlanGroup[], waitMs: number): string[] {
  const out: string[] = [];
  if (groups.length < 1) out.push("a plan needs at least one group");
  if (groups.length > 20) out.push(`a plan has at most 20 groups, not ${groups.length}`);
  const names = new Set<string>();
  groups.forEach((g, i) => {
    if (g.name.trim() === "") out.push(`group ${i + 1} needs a name`);
    if (names.has(g.name)) out.push(`group name "${g.name}" is used twice`);
    names.add(g.name);
    const empty =
      Object.keys(g.selector.labels).length === 0 &&
      g.selector.pools.length === 0 &&
      g.selector.nodeIds.length === 0;
    if (empty) out.push(`group "${g.name}" selects every node: give it a pool, labels or nodes`);
  });
  if (!Number.isSafeInteger(waitMs) || waitMs < 0)
    out.push(`the wait between groups must be a whole number of ms ≥ 0, not ${waitMs}`);
  return out;
}

/** A new running plan; its first group starts at the next step. */
export function createPlan(input: {
  readonly id: string;
  readonly template: CampaignSpec;
  readonly groups: readonly PlanGroup[];
  readonly waitMs: number;
  readonly now: number;
  readonly createdBy: string;
}): RolloutPlan {
  return {
    id: input.id,
    template: input.template,
    waitMs: input.waitMs,
    groups: input.groups.map((g) => ({
      name: g.name,
      selector: g.selector,
      campaignId: undefined,
      startedAt: undefined,
      endedAt: undefined,
      outcome: undefined,
    })),
    phase: "running",
    currentGroup: 0,
    createdAt: input.now,
    createdBy: input.createdBy,
    message: undefined,
    endedAt: undefined,
  };
}

/** The spec of group `index`'s campaign: the template over the group's selector. */
export function groupCampaignSpec(plan: RolloutPlan, index: number): CampaignSpec {
  const g = plan.groups[index];
  if (g === undefined) throw new Error(`plan ${plan.id} has no group ${index + 1}`);
  const t = plan.template.selector;
  return {
    ...plan.template,
    selector: {
      labels: { ...t.labels, ...g.selector.labels },
      pools: g.selector.pools.length > 0 ? g.selector.pools : t.pools,
      nodeIds: g.selector.nodeIds.length > 0 ? g.selector.nodeIds : t.nodeIds,
    },
    reason: `${plan.template.reason ? `${plan.template.reason}: ` : ""}plan ${plan.id}, group ${index + 1} of ${plan.groups.length} (${g.name})`,
  };
}

/** The id of group `index`'s campaign (one per group and plan). */
export function groupCampaignId(planId: string, index: number): string {
  return `${planId}-g${index + 1}`;
}

/** True for a phase that means the group's campaign breached or was stopped. */
function breached(phase: CampaignPhase): boolean {
  return (
    phase === "rolling_back" || phase === "rolled_back" || phase === "failed" || phase === "aborted"
  );
}

/**
 * What the plan does now: nothing once ended; halt when the current group's campaign rolls
 * back or ended other than completed (or is gone); the group completed once its campaign
 * finished completed; start the first group at once and every later one only once the one
 * before it completed (or was empty) and `waitMs` elapsed since (wait until then).
 */
export function nextPlanStep(
  plan: RolloutPlan,
  campaigns: ReadonlyMap<string, GroupCampaign>,
  now: number,
): PlanStep {
  if (isPlanEnded(plan.phase)) return { kind: "none" };
  const i = plan.currentGroup;
  const g = plan.groups[i];
  if (g === undefined) return { kind: "none" };
  if (g.campaignId === undefined) {
    if (i === 0) return { kind: "start_group", group: 0 };
    const prev = plan.groups[i - 1];
    if (prev?.endedAt === undefined) return { kind: "none" };
    const until = prev.endedAt + plan.waitMs;
    return now >= until ? { kind: "start_group", group: i } : { kind: "wait", until };
  }
  const c = campaigns.get(g.campaignId);
  if (c === undefined)
    return {
      kind: "halt",
      group: i,
      message: `campaign ${g.campaignId} of group "${g.name}" is gone`,
    };
  if (breached(c.phase)) {
    return {
      kind: "halt",
      group: i,
      message: `group "${g.name}" breached: campaign ${g.campaignId} is ${c.phase}`,
    };
  }
  if (c.phase === "completed" && c.finishedAt !== undefined)
    return { kind: "group_completed", group: i, at: c.finishedAt };
  return { kind: "none" };
}

/** The plan after a group's campaign `campaignId` started (or was found empty) at `now`. */
export function planGroupStarted(
  plan: RolloutPlan,
  group: number,
  start: { readonly campaignId: string } | { readonly empty: string },
  now: number,
): RolloutPlan {
  const groups = plan.groups.map((g, i) => {
    if (i !== group) return g;
    if ("campaignId" in start) return { ...g, campaignId: start.campaignId, startedAt: now };
    return { ...g, startedAt: now, endedAt: now, outcome: "empty" as const };
  });
  const next = { ...plan, groups, message: "empty" in start ? start.empty : undefined };
  return "empty" in start ? advance(next, group, now) : next;
}

function advance(plan: RolloutPlan, group: number, at: number): RolloutPlan {
  if (group + 1 >= plan.groups.length)
    return { ...plan, phase: "completed", endedAt: at, currentGroup: group };
  return { ...plan, currentGroup: group + 1 };
}

/**
 * The plan after `step` (a `start_group` is applied by {@link planGroupStarted} once the
 * campaign exists; `none` and `wait` change nothing).
 */
export function applyPlanStep(plan: RolloutPlan, step: PlanStep, now: number): RolloutPlan {
  switch (step.kind) {
    case "none":
    case "wait":
    case "start_group":
      return plan;
    case "group_completed": {
      const groups = plan.groups.map((g, i) =>
        i === step.group ? { ...g, endedAt: step.at, outcome: "completed" as const } : g,
      );
      return advance({ ...plan, groups, message: undefined }, step.group, step.at);
    }
    case "halt": {
      const groups = plan.groups.map((g, i) =>
        i === step.group ? { ...g, endedAt: now, outcome: "breached" as const } : g,
      );
      return { ...plan, groups, phase: "halted", message: step.message, endedAt: now };
    }
    default:
      return assertNever(step, "plan step");
  }
}

/** The plan after an administrator aborted it at `now` (a running group ends `aborted`). */
export function abortPlan(plan: RolloutPlan, reason: string, now: number): RolloutPlan {
  const groups = plan.groups.map((g, i) =>
    i === plan.currentGroup && g.campaignId !== undefined && g.outcome === undefined
      ? { ...g, endedAt: now, outcome: "aborted" as const }
      : g,
  );
  return {
    ...plan,
    groups,
    phase: "aborted",
    message: reason ? `aborted: ${reason}` : "aborted",
    endedAt: now,
  };
}

/**
 * Violations of the plan rules over a plan and its groups' campaigns (empty when it holds):
 * a group's campaign exists only when every group before it completed (or was empty) and
 * the wait elapsed after the one before it; no group starts after a breached one; a halted
 * plan names a breached group.
 */
export function planViolationsOf(
  plan: RolloutPlan,
  createdAt: ReadonlyMap<string, number>,
): string[] {
  const out: string[] = [];
  plan.groups.forEach((g, i) => {
    if (g.campaignId === undefined || i === 0) return;
    const prev = plan.groups[i - 1] as GroupRecord;
    const at = createdAt.get(g.campaignId);
    if (prev.outcome !== "completed" && prev.outcome !== "empty")
      out.push(
        `P1: plan ${plan.id} started group ${i + 1} while group ${i} is ${prev.outcome ?? "unfinished"}`,
      );
    else if (at !== undefined && prev.endedAt !== undefined && at < prev.endedAt + plan.waitMs)
      out.push(
        `P1: plan ${plan.id} started group ${i + 1} at ${at}, before group ${i} ended (${prev.endedAt}) + the wait (${plan.waitMs} ms)`,
      );
  });
  const breachedAt = plan.groups.findIndex((g) => g.outcome === "breached");
  if (breachedAt >= 0) {
    if (plan.groups.slice(breachedAt + 1).some((g) => g.campaignId !== undefined))
      out.push(`P2: plan ${plan.id} started a group after group ${breachedAt + 1} breached`);
    if (plan.phase !== "halted")
      out.push(`P2: plan ${plan.id} has a breached group but is ${plan.phase}`);
  }
  if (plan.phase === "halted" && breachedAt < 0)
    out.push(`P2: plan ${plan.id} is halted without a breached group`);
  return out;
}
