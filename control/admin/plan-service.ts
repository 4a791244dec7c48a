/**
 * `agentcontrol.admin.v1.PlanService`: start, read and abort rollout plans. A start checks the
 * template as a campaign of every group would be checked (policy, release) and records the
 * plan; the leader's worker starts its groups' campaigns one after the other (`plan-runner`).
 * An abort ends the plan and aborts the running group's campaign.
 */
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { durationFromMs, durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type RolloutPlan as PlanMessage,
  type PlanService,
  RolloutPlanSchema,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  abortPlan,
  createPlan,
  groupCampaignSpec,
  type PlanGroup,
  type Policy,
  planViolations,
  type RolloutPlan,
  resolveSpec,
} from "../campaign/index.js";
import { createSqlFleetStore, PlanVersionConflict, readCampaign } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { ControlError } from "../errors.js";
import { type Principal, principalKey } from "./auth.js";
import { submitCommand } from "./campaign-commands.js";
import { specInputFromProto, specToProto } from "./campaign-convert.js";
import { admitEach } from "./campaign-start.js";
import { sqlReleaseLookup } from "./release-lookup.js";

/** What the service needs. */
export interface PlanServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  /** The newest Agent version this Control supports (config `agent.maxVersion`). */
  readonly maxVersion?: string | undefined;
  /** The release channel's TUF repository (`tuf.dir`): every group's target must be listed. */
  readonly tufDir?: string | undefined;
  /** `gates.allowedHosts`: every gate of the template must be on one of them. */
  readonly gateHosts?: readonly string[] | undefined;
  /** Asks the leader's worker to run its fleet passes (and decide campaigns) soon. */
  readonly wake: (campaignId?: string) => void;
}

const actorOf = (ctx: HandlerContext): Principal => ctx.values.get(principalKey) as Principal;
const ts = (ms: number | undefined) =>
  ms === undefined ? undefined : timestampFromDate(new Date(ms));

/** A plan as the API shows it. */
export function planToMessage(p: RolloutPlan): PlanMessage {
  const prev = p.groups[p.currentGroup - 1];
  const waiting =
    p.phase === "running" &&
    p.groups[p.currentGroup]?.campaignId === undefined &&
    prev?.endedAt !== undefined;
  return create(RolloutPlanSchema, {
    id: p.id,
    phase: p.phase,
    groups: p.groups.map((g) => ({
      name: g.name,
      selector: {
        labels: { ...g.selector.labels },
        pools: [...g.selector.pools],
        nodeIds: [...g.selector.nodeIds],
      },
      campaignId: g.campaignId ?? "",
      startedAt: ts(g.startedAt),
      endedAt: ts(g.endedAt),
      outcome: g.outcome ?? "",
    })),
    currentGroup: p.currentGroup,
    wait: durationFromMs(p.waitMs),
    template: specToProto(p.template),
    createdAt: ts(p.createdAt),
    createdBy: p.createdBy,
    message: p.message ?? "",
    endedAt: ts(p.endedAt),
    nextGroupAt: waiting && prev?.endedAt !== undefined ? ts(prev.endedAt + p.waitMs) : undefined,
  });
}

function planId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `p-${stamp}-${randomBytes(3).toString("hex")}`;
}

/** Builds the PlanService implementation. */
export function createPlanService(deps: PlanServiceDeps): ServiceImpl<typeof PlanService> {
  const store = createSqlFleetStore(deps.db.pool);
  const read = async (id: string) => {
    const row = await store.transaction((tx) => tx.readPlan(id));
    if (!row) throw new ControlError("plan_not_found", `no plan with id "${id}"`);
    return row;
  };
  return {
    async startPlan(req, ctx) {
      const template = resolveSpec(specInputFromProto(req.template, deps.policy), deps.policy);
      const groups: PlanGroup[] = req.groups.map((g) => ({
        name: g.name.trim(),
        selector: {
          labels: { ...(g.selector?.labels ?? {}) },
          pools: [...(g.selector?.pools ?? [])],
          nodeIds: [...(g.selector?.nodeIds ?? [])],
        },
      }));
      const waitMs = req.wait ? durationMs(req.wait) : 0;
      const problems = planViolations(groups, waitMs);
      if (problems.length > 0) {
        throw new ControlError("invalid_plan", `the plan is not valid: ${problems.join("; ")}`, {
          violations: problems.join("; "),
        });
      }
      const now = deps.clock.now();
      const actor = actorOf(ctx);
      const plan = createPlan({
        id: planId(now),
        template,
        groups,
        waitMs,
        now: now.getTime(),
        createdBy: actor.name,
      });
      // Every group's campaign must pass the admission of an administrator's plan.
      await admitEach(
        {
          fleet: store,
          release: sqlReleaseLookup(deps.db),
          clock: deps.clock,
          policy: deps.policy,
          maxVersion: deps.maxVersion,
          tufDir: deps.tufDir,
          gateHosts: deps.gateHosts,
        },
        groups.map((_, i) => groupCampaignSpec(plan, i)),
        (i) => `group ${i + 1} (${groups[i]?.name})`,
      );
      await store.transaction(async (tx) => {
        await tx.insertPlan(plan, now);
        await tx.insertAudits(
          [
            {
              actor: actor.name,
              actorIp: actor.ip,
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
          now,
        );
      });
      deps.wake();
      return { plan: planToMessage(plan) };
    },

    async getPlan(req) {
      return { plan: planToMessage((await read(req.id)).plan) };
    },

    async listPlans() {
      const rows = await store.transaction((tx) => tx.readPlans(false));
      return { plans: rows.map((r) => planToMessage(r.plan)) };
    },

    async abortPlan(req, ctx) {
      const actor = actorOf(ctx);
      for (let attempt = 0; ; attempt++) {
        const row = await read(req.id);
        if (row.plan.phase !== "running") {
          throw new ControlError(
            "campaign_state",
            `plan ${req.id} is ${row.plan.phase}; only a running plan can be aborted`,
          );
        }
        const now = deps.clock.now();
        const after = abortPlan(row.plan, req.reason, now.getTime());
        try {
          await store.transaction(async (tx) => {
            await tx.writePlan(after, row.version, now);
            await tx.insertAudits(
              [
                {
                  actor: actor.name,
                  actorIp: actor.ip,
                  action: "plan.abort",
                  campaignId: req.id,
                  message: `plan ${req.id} aborted${req.reason ? `: ${req.reason}` : ""}`,
                },
              ],
              now,
            );
          });
        } catch (error) {
          if (error instanceof PlanVersionConflict && attempt < 3) continue;
          throw error;
        }
        const running = row.plan.groups[row.plan.currentGroup]?.campaignId;
        if (running !== undefined) {
          const c = await readCampaign(deps.db.pool, running);
          if (
            c &&
            c.finishedAt === undefined &&
            (c.campaign.phase === "running" || c.campaign.phase === "paused")
          ) {
            await submitCommand(
              store,
              running,
              {
                kind: "abort",
                rollback: req.rollback,
                reason: `plan ${req.id} aborted${req.reason ? `: ${req.reason}` : ""}`,
              },
              { name: actor.name, ip: actor.ip },
              now,
            );
            deps.wake(running);
          }
        }
        return { plan: planToMessage(after) };
      }
    },
  };
}
