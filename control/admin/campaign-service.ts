/**
 * `agentcontrol.admin.v1.CampaignService`. Plan has no side effects; Start and Retry write a
 * new campaign and wake the worker; Pause/Resume/Abort/SkipGate record a command that the leader's
 * worker applies through `decide` (the answer waits briefly for it); Watch streams the
 * campaign on every change until its phase has ended and it has finished.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type {
  Campaign,
  CampaignService,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  type AdminCommand,
  type CampaignPhase,
  estimateCampaign,
  isEndedPhase,
  type Policy,
  resolveSpec,
} from "../campaign/index.js";
import {
  campaignNodePage,
  campaignPage,
  campaignWithCounts,
  createSqlFleetStore,
  nodeStateCounts,
  readCampaign,
  readNodes,
} from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Actor } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { ControlError } from "../errors.js";
import { authenticate, type Principal, principalKey, type TokenEntry } from "./auth.js";
import { awaitCommand, submitCommand } from "./campaign-commands.js";
import {
  campaignNodeToProto,
  campaignToProto,
  countNodes,
  countStates,
  nodeStateFromProto,
  phaseFromProto,
  planToProto,
} from "./campaign-convert.js";
import { retrySettingsFromProto, specInputFromProto } from "./campaign-spec-convert.js";
import { planOnly, retryCampaign, type StartDeps, startCampaign } from "./campaign-start.js";
import { revokedNodeIds } from "./node-status-reads.js";
import { decodePageToken, encodePageToken, pageSize } from "./paging.js";
import { sqlReleaseLookup } from "./release-lookup.js";

/** The worker as the service sees it. */
export interface CampaignWorkerPort {
  /** Marks the campaign due on this Control's worker (a no-op unless it leads). */
  wake(campaignId: string): void;
  /** Calls back after each decision of this Control's worker; returns the unsubscribe. */
  onDecided(listener: (campaignId: string) => void): () => void;
}

/** Dependencies of the campaign service. */
export interface CampaignServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  readonly maxVersion: string | undefined;
  /** The release channel's TUF repository directory, when configured. */
  readonly tufDir?: string | undefined;
  /** `gates.allowedHosts`: a campaign's gates must be on one of them. */
  readonly gateHosts?: readonly string[] | undefined;
  readonly worker: CampaignWorkerPort;
  /** How long Pause/Resume/Abort/SkipGate wait for the leader to apply them (default 5 s). */
  readonly commandWaitMs?: number;
  /** How often Watch re-reads the campaign when no local decision signals a change (default 400 ms). */
  readonly watchPollMs?: number;
  /**
   * The admin tokens in force (a live view): a Watch re-checks its caller's token at every
   * poll and ends UNAUTHENTICATED once it was removed or has expired.
   */
  readonly adminTokens?: readonly TokenEntry[];
}

const actorOf = (ctx: HandlerContext): Actor => {
  const p = ctx.values.get(principalKey) as Principal;
  return { name: p.name, ip: p.ip };
};

/** Builds the CampaignService implementation. */
export function createCampaignService(
  deps: CampaignServiceDeps,
): ServiceImpl<typeof CampaignService> {
  const startDeps: StartDeps = {
    fleet: createSqlFleetStore(deps.db.pool),
    release: sqlReleaseLookup(deps.db),
    clock: deps.clock,
    policy: deps.policy,
    maxVersion: deps.maxVersion,
    tufDir: deps.tufDir,
    gateHosts: deps.gateHosts,
  };
  const message = async (id: string): Promise<Campaign> => {
    const found = await campaignWithCounts(deps.db.pool, id);
    if (!found) throw new ControlError("campaign_not_found", `no campaign with id "${id}"`);
    return campaignToProto(
      found.row.campaign,
      found.row,
      countStates(found.counts),
      deps.clock.now().getTime(),
    );
  };
  const command = async (id: string, cmd: AdminCommand, ctx: HandlerContext) => {
    const commandId = await submitCommand(startDeps.fleet, id, cmd, actorOf(ctx), deps.clock.now());
    deps.worker.wake(id);
    const outcome = await awaitCommand(
      deps.db.pool,
      commandId,
      deps.commandWaitMs ?? 5000,
      ctx.signal,
    );
    if (outcome?.startsWith("ignored")) {
      throw new ControlError("campaign_state", outcome.replace(/^ignored: /, ""));
    }
    return { campaign: await message(id) };
  };
  const changed = (id: string, ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const stop = new AbortController();
      const off = deps.worker.onDecided((decided) => {
        if (decided === id) stop.abort();
      });
      const onAbort = () => stop.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      delay(ms, undefined, { signal: stop.signal })
        .catch(() => {})
        .finally(() => {
          off();
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
    });

  return {
    async planCampaign(req) {
      const { spec, plan, yankedPrevious } = await planOnly(
        startDeps,
        specInputFromProto(req.spec, deps.policy),
      );
      const now = deps.clock.now().getTime();
      const revoked = await revokedNodeIds(
        deps.db,
        plan.nodes.map((n) => n.nodeId),
      );
      return planToProto(
        plan,
        estimateCampaign(spec, plan, now),
        now,
        yankedPrevious,
        spec,
        revoked,
      );
    },

    async startCampaign(req, ctx) {
      const spec = resolveSpec(specInputFromProto(req.spec, deps.policy), deps.policy);
      const campaign = await startCampaign(startDeps, { spec, actor: actorOf(ctx) });
      deps.worker.wake(campaign.id);
      return { campaign: await message(campaign.id) };
    },

    async listCampaigns(req) {
      const limit = pageSize(req.pageSize);
      const token = decodePageToken(req.pageToken);
      let after: { createdAt: Date; id: string } | undefined;
      if (token !== undefined) {
        const bar = token.indexOf("|");
        const [ms, id] = [token.slice(0, Math.max(0, bar)), token.slice(bar + 1)];
        if (bar < 0 || !/^\d+$/.test(ms) || id === "") {
          throw new ControlError("invalid_argument", "page_token is not one this server issued", {
            field: "page_token",
          });
        }
        after = { createdAt: new Date(Number(ms)), id };
      }
      const phases: CampaignPhase[] = req.phases.map(phaseFromProto);
      const page = await campaignPage(deps.db.pool, {
        phases,
        nodeId: req.nodeId || undefined,
        limit,
        after,
      });
      const counts = await nodeStateCounts(
        deps.db.pool,
        page.rows.map((r) => r.campaign.id),
      );
      const now = deps.clock.now().getTime();
      const last = page.rows.at(-1)?.campaign;
      return {
        campaigns: page.rows.map((r) =>
          campaignToProto(r.campaign, r, countStates(counts.get(r.campaign.id) ?? []), now),
        ),
        nextPageToken: page.more && last ? encodePageToken(`${last.createdAt}|${last.id}`) : "",
      };
    },

    async getCampaign(req) {
      if (req.summaryOnly) return { campaign: await message(req.id), nodes: [] };
      const row = await readCampaign(deps.db.pool, req.id);
      if (!row) throw new ControlError("campaign_not_found", `no campaign with id "${req.id}"`);
      const nodes = await readNodes(deps.db.pool, req.id);
      return {
        campaign: campaignToProto(row.campaign, row, countNodes(nodes), deps.clock.now().getTime()),
        nodes: nodes.map(campaignNodeToProto),
      };
    },

    async listCampaignNodes(req) {
      const limit = pageSize(req.pageSize);
      const states = req.states.map(nodeStateFromProto);
      const token = decodePageToken(req.pageToken);
      let after: { order: number; nodeId: string } | undefined;
      if (token !== undefined) {
        const match = /^(\d+)\|(.+)$/.exec(token);
        if (!match) {
          throw new ControlError("invalid_argument", "page_token is not one this server issued", {
            field: "page_token",
          });
        }
        after = { order: Number(match[1]), nodeId: match[2] ?? "" };
      }
      if (!(await readCampaign(deps.db.pool, req.campaignId))) {
        throw new ControlError("campaign_not_found", `no campaign with id "${req.campaignId}"`);
      }
      const page = await campaignNodePage(deps.db.pool, {
        campaignId: req.campaignId,
        states,
        limit,
        after,
      });
      const last = page.nodes.at(-1);
      return {
        nodes: page.nodes.map(campaignNodeToProto),
        nextPageToken: page.more && last ? encodePageToken(`${last.order}|${last.nodeId}`) : "",
      };
    },

    async pauseCampaign(req, ctx) {
      return await command(req.id, { kind: "pause", reason: req.reason }, ctx);
    },

    async resumeCampaign(req, ctx) {
      return await command(req.id, { kind: "resume", reason: req.reason }, ctx);
    },

    async abortCampaign(req, ctx) {
      return await command(
        req.id,
        { kind: "abort", rollback: req.rollback, reason: req.reason },
        ctx,
      );
    },

    async skipGate(req, ctx) {
      if (req.gate < 1) {
        throw new ControlError("invalid_argument", "gate is a gate's number, counted from 1", {
          field: "gate",
        });
      }
      if (req.reason.trim() === "") {
        throw new ControlError("invalid_argument", "a reason is required to skip a gate", {
          field: "reason",
        });
      }
      return await command(
        req.id,
        { kind: "skip_gate", gate: req.gate - 1, reason: req.reason },
        ctx,
      );
    },

    async retryCampaign(req, ctx) {
      const campaign = await retryCampaign(startDeps, {
        id: req.id,
        excludeNodeIds: req.excludeNodeIds,
        reason: req.reason,
        actor: actorOf(ctx),
        settings: retrySettingsFromProto(req.settings, req.settingsMask, deps.policy),
      });
      deps.worker.wake(campaign.id);
      return { campaign: await message(campaign.id) };
    },

    async *watchCampaign(req, ctx) {
      let lastVersion = -1;
      const authorization = ctx.requestHeader.get("authorization") ?? undefined;
      while (!ctx.signal.aborted) {
        // A removed or expired token ends the stream it opened (throws unauthenticated).
        if (deps.adminTokens) authenticate(authorization, deps.adminTokens, deps.clock.now());
        const found = await campaignWithCounts(deps.db.pool, req.id);
        if (!found) throw new ControlError("campaign_not_found", `no campaign with id "${req.id}"`);
        const { row } = found;
        if (row.version !== lastVersion) {
          lastVersion = row.version;
          yield {
            campaign: campaignToProto(
              row.campaign,
              row,
              countStates(found.counts),
              deps.clock.now().getTime(),
            ),
          };
        }
        if (isEndedPhase(row.campaign.phase) && row.finishedAt !== undefined) return;
        await changed(req.id, deps.watchPollMs ?? 400, ctx.signal);
      }
    },
  };
}
