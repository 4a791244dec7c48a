/**
 * An administrator's rollout-plan commands (start, abort) over the fleet store port (SQL in
 * Control, memory in the simulation), each with its audit row. A start checks every group's
 * campaign as the admission of an administrator's plan would and records the plan; the
 * leader's worker starts its groups' campaigns one after the other (`plan-runner`). An abort
 * ends the plan and records an abort command for the running group's campaign, in one commit.
 */
import {
  abortPlan,
  type CampaignSpec,
  createPlan,
  groupCampaignSpec,
  type PlanGroup,
  planViolations,
  type RolloutPlan,
} from "../campaign/index.js";
import { type FleetStore, PlanVersionConflict } from "../campaign-store/index.js";
import type { Actor } from "../db/audit-log.js";
import { ControlError } from "../errors.js";
import { recordCommand } from "./campaign-commands.js";
import { admitEach, type StartDeps } from "./campaign-start.js";

/** A plan to start, as an administrator asks for it. */
export interface StartPlanRequest {
  /** The new plan's id, unique in the store. */
  readonly id: string;
  readonly template: CampaignSpec;
  readonly groups: readonly PlanGroup[];
  readonly waitMs: number;
  readonly actor: Actor;
  readonly now: Date;
}

/**
 * Starts a rollout plan: checks its groups and wait, admits each group's campaign as a plan
 * (policy, release, ramp limits), and records the plan with its `plan.start` audit row.
 * @throws ControlError `invalid_plan`, or the first group's admission refusal (its message
 *   naming the group); nothing is written then.
 */
export async function startRolloutPlan(
  deps: StartDeps,
  req: StartPlanRequest,
): Promise<RolloutPlan> {
  const problems = planViolations(req.groups, req.waitMs);
  if (problems.length > 0) {
    throw new ControlError("invalid_plan", `the plan is not valid: ${problems.join("; ")}`, {
      violations: problems.join("; "),
    });
  }
  const plan = createPlan({
    id: req.id,
    template: req.template,
    groups: req.groups,
    waitMs: req.waitMs,
    now: req.now.getTime(),
    createdBy: req.actor.name,
  });
  await admitEach(
    deps,
    req.groups.map((_, i) => groupCampaignSpec(plan, i)),
    (i) => `group ${i + 1} (${req.groups[i]?.name})`,
  );
  const { template, groups, waitMs } = plan;
  await deps.fleet.transaction(async (tx) => {
    await tx.insertPlan(plan, req.now);
    await tx.insertAudits(
      [
        {
          actor: req.actor.name,
          actorIp: req.actor.ip,
          action: "plan.start",
          campaignId: plan.id,
          message: `plan ${plan.id} started: ${template.targetVersion} over ${groups.map((g) => g.name).join(" → ")}, ${Math.round(waitMs / 1000)} s between groups${template.reason ? `: ${template.reason}` : ""}`,
          detail: {
            groups: groups.map((g) => g.name),
            waitMs,
            targetVersion: template.targetVersion,
          },
        },
      ],
      req.now,
    );
  });
  return plan;
}

/** A plan to abort. */
export interface AbortPlanRequest {
  readonly id: string;
  readonly reason: string;
  /** Roll the running group's current batch back. */
  readonly rollback: boolean;
  readonly actor: Actor;
  readonly now: Date;
}

/** A plan as aborted, and the campaign an abort command was recorded for, if any. */
export interface AbortPlanResult {
  readonly plan: RolloutPlan;
  /** The running group's campaign, when it was running or paused (the caller wakes it). */
  readonly abortedCampaign: string | undefined;
}

/** How many times an abort re-reads a plan that changed under it before it gives up. */
const ABORT_ATTEMPTS = 4;

/**
 * Aborts a running plan with its `plan.abort` audit row (no group starts after it) and, in the
 * same transaction, an abort command (with `rollback`) for the running group's campaign when
 * that is running or paused: the plan never ends with its campaign left running.
 * @throws ControlError `plan_not_found`, or `campaign_state` when the plan is not running.
 */
export async function abortRolloutPlan(
  fleet: FleetStore,
  req: AbortPlanRequest,
): Promise<AbortPlanResult> {
  const reason = `plan ${req.id} aborted${req.reason ? `: ${req.reason}` : ""}`;
  for (let attempt = 1; ; attempt++) {
    const row = await fleet.transaction((tx) => tx.readPlan(req.id));
    if (!row) throw new ControlError("plan_not_found", `no plan with id "${req.id}"`);
    if (row.plan.phase !== "running") {
      throw new ControlError(
        "campaign_state",
        `plan ${req.id} is ${row.plan.phase}; only a running plan can be aborted`,
      );
    }
    const after = abortPlan(row.plan, req.reason, req.now.getTime());
    const running = row.plan.groups[row.plan.currentGroup]?.campaignId;
    try {
      const aborted = await fleet.transaction(async (tx) => {
        await tx.writePlan(after, row.version, req.now);
        await tx.insertAudits(
          [
            {
              actor: req.actor.name,
              actorIp: req.actor.ip,
              action: "plan.abort",
              campaignId: req.id,
              message: reason,
            },
          ],
          req.now,
        );
        if (running === undefined) return undefined;
        const c = await tx.campaigns.readCampaign(running);
        const live =
          c !== undefined &&
          c.finishedAt === undefined &&
          (c.campaign.phase === "running" || c.campaign.phase === "paused");
        if (!live) return undefined;
        const abort = { kind: "abort", rollback: req.rollback, reason } as const;
        await recordCommand(tx, running, abort, req.actor, req.now);
        return running;
      });
      return { plan: after, abortedCampaign: aborted };
    } catch (error) {
      if (error instanceof PlanVersionConflict && attempt < ABORT_ATTEMPTS) continue;
      throw error;
    }
  }
}
