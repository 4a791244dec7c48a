/**
 * The leader's plan pass, the shell around the pure `nextPlanStep`: for every running plan,
 * in ONE fenced transaction under the start lock, read its groups' campaigns, apply the steps
 * the plan takes now (a group completed, the plan halted on a breach, a group's campaign
 * started), and write the plan with an audit row per step. A group whose nodes are busy in
 * another campaign waits for the next pass, also a campaign this pass started for another
 * plan; a group with nothing to upgrade counts as done.
 */
import {
  type AdmissionRules,
  applyPlanStep,
  type FleetNode,
  type GroupCampaign,
  groupCampaignId,
  groupCampaignSpec,
  nextPlanStep,
  PLAN_CREATOR,
  type PlanStep,
  planGroupStarted,
  type RolloutPlan,
} from "../campaign/index.js";
import type {
  AuditRow,
  FleetTransaction,
  LeaderLease,
  OfferRelease,
} from "../campaign-store/index.js";
import { ENGINE_ACTOR } from "./audit.js";
import type { WorkerGateway } from "./facts.js";
import { admissionRelease, fleetNodesOf, startSystemCampaign, withBusy } from "./system-start.js";

/** What a plan pass needs. */
export interface PlanPassDeps {
  readonly lease: LeaderLease;
  readonly gateway: WorkerGateway;
  readonly self: string;
  /** The registered release `version` (its sequence), or undefined. */
  readonly release: (version: string) => Promise<OfferRelease | undefined>;
  /** The policy and `agent.maxVersion` every group's start is admitted under. */
  readonly rules: AdmissionRules;
  /**
   * Why the release channel's TUF targets (config `tuf.dir`) do not list `version` at
   * `sequence`, or undefined when they do; absent: no channel is configured.
   */
  readonly unlisted?:
    | ((version: string, sequence: number) => Promise<string | undefined>)
    | undefined;
}

/** What a plan pass did. */
export interface PlanPassOutcome {
  readonly started: readonly string[];
  /** The earliest time a plan waits for (a group's wait ending), if any. */
  readonly wakeAt: number | undefined;
}

function audit(plan: RolloutPlan, action: string, message: string, detail = {}): AuditRow {
  return {
    actor: ENGINE_ACTOR,
    actorIp: "",
    action,
    campaignId: plan.id,
    message: `plan ${plan.id}: ${message}`,
    detail,
  };
}

function stepAudit(plan: RolloutPlan, step: PlanStep, after: RolloutPlan): AuditRow[] {
  const out: AuditRow[] = [];
  if (step.kind === "group_completed") {
    const g = plan.groups[step.group];
    out.push(audit(plan, "plan.group.pass", `group ${step.group + 1} (${g?.name}) completed`));
  } else if (step.kind === "halt") {
    out.push(audit(plan, "plan.halt", `halted: ${step.message}`, { group: step.group }));
  }
  if (after.phase === "completed" && plan.phase !== "completed")
    out.push(audit(plan, "plan.complete", `every group completed`));
  return out;
}

/** One plan pass in the caller's transaction (see the file's TSDoc). */
export async function planPass(
  deps: PlanPassDeps,
  tx: FleetTransaction,
  now: Date,
): Promise<PlanPassOutcome> {
  await deps.lease.fence(tx.campaigns);
  const live = await tx.readPlans(true);
  if (live.length === 0) return { started: [], wakeAt: undefined };
  await tx.lockStarts();
  let fleet: FleetNode[] | undefined;
  const started: string[] = [];
  let wakeAt: number | undefined;
  for (const row of live) {
    let plan = row.plan;
    const audits: AuditRow[] = [];
    for (let round = 0; round <= plan.groups.length + 1; round++) {
      const ids = plan.groups.flatMap((g) => (g.campaignId === undefined ? [] : [g.campaignId]));
      const summaries = await tx.campaignSummaries(ids);
      const campaigns = new Map<string, GroupCampaign>(
        summaries.map((s) => [s.id, { phase: s.phase, finishedAt: s.finishedAt }]),
      );
      const step = nextPlanStep(plan, campaigns, now.getTime());
      if (step.kind === "none") break;
      if (step.kind === "wait") {
        wakeAt = Math.min(wakeAt ?? step.until, step.until);
        break;
      }
      if (step.kind !== "start_group") {
        const after = applyPlanStep(plan, step, now.getTime());
        for (const a of stepAudit(plan, step, after)) audits.push(a);
        plan = after;
        continue;
      }
      const spec = groupCampaignSpec(plan, step.group);
      const group = plan.groups[step.group];
      const release = await deps.release(spec.targetVersion);
      // Every Agent on the channel would refuse an unlisted release: the plan halts instead.
      const unlisted =
        release === undefined
          ? undefined
          : await deps.unlisted?.(release.version, release.sequence);
      if (release === undefined || unlisted !== undefined) {
        const halt: PlanStep = {
          kind: "halt",
          group: step.group,
          message: unlisted ?? `release ${spec.targetVersion} is not registered`,
        };
        const after = applyPlanStep(plan, halt, now.getTime());
        for (const a of stepAudit(plan, halt, after)) audits.push(a);
        plan = after;
        break;
      }
      fleet ??= fleetNodesOf(await tx.readFleet(), deps.gateway, deps.self);
      const result = await startSystemCampaign(tx, {
        campaignId: groupCampaignId(plan.id, step.group),
        spec,
        origin: "operator",
        target: admissionRelease(release),
        fleet,
        rules: deps.rules,
        createdBy: `${PLAN_CREATOR}${plan.id}`,
        now,
        audit: `plan ${plan.id}, group ${step.group + 1} (${group?.name})`,
      });
      if (result.kind === "busy") {
        const message = `group ${step.group + 1} (${group?.name}) waits: ${result.nodeIds.length} node(s) busy in another campaign`;
        if (plan.message !== message) plan = { ...plan, message };
        break;
      }
      if (result.kind === "refused") {
        const halt: PlanStep = { kind: "halt", group: step.group, message: result.message };
        const after = applyPlanStep(plan, halt, now.getTime());
        for (const a of stepAudit(plan, halt, after)) audits.push(a);
        plan = after;
        break;
      }
      if (result.kind === "empty") {
        const after = planGroupStarted(plan, step.group, { empty: result.message }, now.getTime());
        audits.push(
          audit(
            plan,
            "plan.group.pass",
            `group ${step.group + 1} (${group?.name}) has nothing to upgrade: ${result.message}`,
          ),
        );
        for (const a of stepAudit(plan, { kind: "none" }, after)) audits.push(a);
        plan = after;
        continue;
      }
      started.push(result.campaignId);
      // The next plan's start in this pass is judged over these nodes too.
      fleet = withBusy(fleet, result.busyNodeIds);
      audits.push(
        audit(
          plan,
          "plan.group.start",
          `group ${step.group + 1} (${group?.name}) started as campaign ${result.campaignId}`,
          {
            group: step.group,
            campaignId: result.campaignId,
          },
        ),
      );
      plan = planGroupStarted(plan, step.group, { campaignId: result.campaignId }, now.getTime());
      break;
    }
    if (plan !== row.plan) {
      await tx.writePlan(plan, row.version, now);
      await tx.insertAudits(audits, now);
    }
  }
  return { started, wakeAt };
}
