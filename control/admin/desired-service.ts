/**
 * `agentcontrol.admin.v1.DesiredVersionService`: list, set and clear the desired version of a
 * selector. Setting one replaces the selector's desired version (whatever set it) and clears a
 * halt; the leader's worker converges the nodes it governs at its next fleet pass.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type DesiredVersion as DesiredMessage,
  DesiredVersionSchema,
  type DesiredVersionService,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  DEFAULT_CONVERGENCE_MAX_FAILURES,
  DEFAULT_DISRUPTION_BUDGET_PERCENT,
  type DesiredVersion,
  desiredIdOf,
  governingDesired,
  type Policy,
} from "../campaign/index.js";
import { createSqlFleetStore, type FleetRow } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { type Principal, principalKey } from "./auth.js";

/** What the service needs. */
export interface DesiredServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  /** Asks the leader's worker to run its fleet passes soon. */
  readonly wake: () => void;
}

const actorOf = (ctx: HandlerContext): Principal => ctx.values.get(principalKey) as Principal;

function messageOf(
  d: DesiredVersion,
  fleet: readonly FleetRow[],
  all: readonly DesiredVersion[],
): DesiredMessage {
  let nodes = 0;
  let converged = 0;
  for (const n of fleet) {
    const candidate = { ...n, agentVersion: n.agentVersion || undefined };
    if (governingDesired(candidate, all)?.id !== d.id) continue;
    nodes++;
    if (n.agentVersion === d.target.version) converged++;
  }
  return create(DesiredVersionSchema, {
    id: d.id,
    selector: {
      labels: { ...d.selector.labels },
      pools: [...d.selector.pools],
      nodeIds: [...d.selector.nodeIds],
    },
    exclude: { nodeIds: [...d.exclude.nodeIds], tags: { ...d.exclude.tags } },
    targetVersion: d.target.version,
    targetSequence: BigInt(d.target.sequence),
    setAt: timestampFromDate(new Date(d.setAt)),
    setBy: d.setBy,
    maxFailures: d.settings.maxFailures,
    disruptionBudgetPercent: d.settings.disruptionBudgetPercent,
    haltedAt: d.haltedAt === undefined ? undefined : timestampFromDate(new Date(d.haltedAt)),
    haltedReason: d.haltedReason ?? "",
    nodes,
    converged,
  });
}

function percent(field: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min || v > 100) {
    throw new ControlError(
      "invalid_argument",
      `${field} must be an integer from ${min} to 100, not ${v}`,
      {
        field,
      },
    );
  }
  return v;
}

/** Builds the DesiredVersionService implementation. */
export function createDesiredService(
  deps: DesiredServiceDeps,
): ServiceImpl<typeof DesiredVersionService> {
  const store = createSqlFleetStore(deps.db.pool);
  return {
    async listDesiredVersions() {
      return await store.transaction(async (tx) => {
        const all = await tx.readDesired();
        const fleet = await tx.readFleet();
        const newest = [...all].sort((a, b) => b.setAt - a.setAt || (a.id < b.id ? -1 : 1));
        return { desiredVersions: newest.map((d) => messageOf(d, fleet, all)) };
      });
    },

    async setDesiredVersion(req, ctx) {
      const version = req.targetVersion.trim();
      if (version === "") {
        throw new ControlError("invalid_argument", "target_version is required", {
          field: "target_version",
        });
      }
      const maxFailures = percent(
        "max_failures",
        req.maxFailures,
        DEFAULT_CONVERGENCE_MAX_FAILURES,
        1,
      );
      const budget = percent(
        "disruption_budget_percent",
        req.disruptionBudgetPercent,
        DEFAULT_DISRUPTION_BUDGET_PERCENT,
        0,
      );
      const release = await deps.db.em().findOne(ReleaseEntity, { version });
      if (!release) {
        throw new ControlError(
          "release_not_found",
          `release ${version} is not registered (agentctl release register)`,
        );
      }
      if (release.yankedAt) {
        throw new ControlError(
          "release_yanked",
          `release ${version} was yanked (${release.yankReason ?? ""}): it is never offered again; set a newer release as the desired version`,
          { version },
        );
      }
      const selector = {
        labels: { ...(req.selector?.labels ?? {}) },
        pools: [...(req.selector?.pools ?? [])],
        nodeIds: [...(req.selector?.nodeIds ?? [])],
      };
      const exclude = {
        nodeIds: [...(req.exclude?.nodeIds ?? [])],
        tags: { ...(req.exclude?.tags ?? {}) },
      };
      const now = deps.clock.now();
      const actor = actorOf(ctx);
      const d: DesiredVersion = {
        id: desiredIdOf(selector, exclude),
        selector,
        exclude,
        target: { version: release.version, sequence: release.sequence },
        setAt: now.getTime(),
        setBy: actor.name,
        settings: {
          reconnectTimeoutMs: deps.policy.reconnectTimeoutMs,
          configGraceMs: deps.policy.configGraceMs,
          disruptionBudgetPercent: budget,
          maxFailures,
        },
        haltedAt: undefined,
        haltedReason: undefined,
      };
      const message = await store.transaction(async (tx) => {
        await tx.writeDesired(d);
        await tx.insertAudits(
          [
            {
              actor: actor.name,
              actorIp: actor.ip,
              action: "desired.set",
              campaignId: d.id,
              message: `desired version ${d.id} set to ${d.target.version}${req.reason ? `: ${req.reason}` : ""}`,
              detail: {
                desiredId: d.id,
                version: d.target.version,
                selector,
                exclude,
                reason: req.reason,
              },
            },
          ],
          now,
        );
        const all = [...(await tx.readDesired()).filter((x) => x.id !== d.id), d];
        return messageOf(d, await tx.readFleet(), all);
      });
      deps.wake();
      return { desired: message };
    },

    async clearDesiredVersion(req, ctx) {
      const actor = actorOf(ctx);
      const now = deps.clock.now();
      await store.transaction(async (tx) => {
        if (!(await tx.deleteDesired(req.id))) {
          throw new ControlError("desired_not_found", `no desired version with id "${req.id}"`);
        }
        await tx.insertAudits(
          [
            {
              actor: actor.name,
              actorIp: actor.ip,
              action: "desired.clear",
              campaignId: req.id,
              message: `desired version ${req.id} cleared: its nodes no longer converge`,
            },
          ],
          now,
        );
      });
      return {};
    },
  };
}
