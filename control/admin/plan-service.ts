/**
 * `agentcontrol.admin.v1.PlanService`: start, read and abort rollout plans, a thin shell over
 * `plan-commands.ts` (which the simulated operator runs too): it converts the request, names
 * the new plan, presents the result and wakes the leader's worker.
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
import { type PlanGroup, type Policy, type RolloutPlan, resolveSpec } from "../campaign/index.js";
import { createSqlFleetStore } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { ControlError } from "../errors.js";
import { type Principal, principalKey } from "./auth.js";
import { specInputFromProto, specToProto } from "./campaign-spec-convert.js";
import { abortRolloutPlan, startRolloutPlan } from "./plan-commands.js";
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
      const now = deps.clock.now();
      const actor = actorOf(ctx);
      const plan = await startRolloutPlan(
        {
          fleet: store,
          release: sqlReleaseLookup(deps.db),
          clock: deps.clock,
          policy: deps.policy,
          maxVersion: deps.maxVersion,
          tufDir: deps.tufDir,
          gateHosts: deps.gateHosts,
        },
        {
          id: planId(now),
          template,
          groups,
          waitMs: req.wait ? durationMs(req.wait) : 0,
          actor: { name: actor.name, ip: actor.ip },
          now,
        },
      );
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
      const aborted = await abortRolloutPlan(store, {
        id: req.id,
        reason: req.reason,
        rollback: req.rollback,
        actor: { name: actor.name, ip: actor.ip },
        now: deps.clock.now(),
      });
      if (aborted.abortedCampaign !== undefined) deps.wake(aborted.abortedCampaign);
      return { plan: planToMessage(aborted.plan) };
    },
  };
}
