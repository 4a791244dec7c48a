/**
 * `agentcontrol.admin.v1.CampaignWaitsService`: what a campaign's current batch waits for,
 * judged by the engine's pure `waitsFor` over the stored campaign, its nodes, the registry's
 * liveness, the pause command, the batch's gate results, its pools' fleet-wide load and the
 * latest phases of the campaign's upgrades in progress (for the download budget). Reads
 * only; any Control answers (not only the leader).
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type CampaignWait,
  CampaignWaitSchema,
  type CampaignWaitsService,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { assertNever, formatWait, type Wait, waitsFor } from "../campaign/index.js";
import { readCampaign, readNodes, readWaitFacts } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { ControlError } from "../errors.js";
import { phaseToProto } from "./campaign-convert.js";
import { gateStatesOf, windowStateOf } from "./campaign-windows-gates.js";

/** Dependencies of the waits service. */
export interface CampaignWaitsServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
}

const at = (ms: number) => timestampFromDate(new Date(ms));

/** The API message of one wait: its kind, sentence and structured fields. */
export function waitToProto(w: Wait, now: number): CampaignWait {
  const base = { kind: w.kind, text: formatWait(w) };
  switch (w.kind) {
    case "ended":
    case "next_decision":
      return create(CampaignWaitSchema, base);
    case "finishing":
      return create(CampaignWaitSchema, { ...base, count: w.inFlight });
    case "paused":
      return create(CampaignWaitSchema, {
        ...base,
        until: at(w.at),
        subject: w.by,
        value: w.reason,
      });
    case "rolling_back":
      return create(CampaignWaitSchema, { ...base, count: w.pending });
    case "window_closed":
      return create(CampaignWaitSchema, {
        ...base,
        subject: w.timeZone,
        ...(w.opensAt === undefined
          ? {}
          : { until: at(w.opensAt), left: durationFromMs(w.opensAt - now) }),
      });
    case "upgrading":
      return create(CampaignWaitSchema, {
        ...base,
        count: w.count,
        left: durationFromMs(w.deadlineLeftMs),
        until: at(now + w.deadlineLeftMs),
      });
    case "verifying":
      return create(CampaignWaitSchema, {
        ...base,
        count: w.count,
        left: durationFromMs(w.graceLeftMs),
        until: at(now + w.graceLeftMs),
      });
    case "concurrency":
      return create(CampaignWaitSchema, { ...base, count: w.inFlight, limit: w.limit });
    case "download_budget":
      return create(CampaignWaitSchema, { ...base, count: w.downloading, limit: w.limit });
    case "pool_budget":
      return create(CampaignWaitSchema, {
        ...base,
        count: w.inFlight,
        limit: w.limit,
        subject: w.pool,
      });
    case "disconnected":
    case "to_offer":
      return create(CampaignWaitSchema, { ...base, count: w.count });
    case "deferred":
      return create(CampaignWaitSchema, {
        ...base,
        count: w.count,
        left: durationFromMs(w.nextOfferLeftMs),
        until: at(now + w.nextOfferLeftMs),
      });
    case "min_duration":
    case "soak":
      return create(CampaignWaitSchema, {
        ...base,
        left: durationFromMs(w.leftMs),
        until: at(now + w.leftMs),
      });
    case "gate_pending":
      return create(CampaignWaitSchema, { ...base, subject: w.label });
    case "gate_unreachable": {
      const left = Math.max(0, w.graceMs - w.forMs);
      return create(CampaignWaitSchema, {
        ...base,
        subject: w.label,
        value: w.value,
        left: durationFromMs(left),
        until: at(now + left),
      });
    }
    case "gate_failing":
      return create(CampaignWaitSchema, { ...base, subject: w.label, value: w.value });
    default:
      return assertNever(w, "wait");
  }
}

/** Builds the CampaignWaitsService implementation. */
export function createCampaignWaitsService(
  deps: CampaignWaitsServiceDeps,
): ServiceImpl<typeof CampaignWaitsService> {
  return {
    async getCampaignWaits(req) {
      if (req.id === "") {
        throw new ControlError("invalid_argument", "a campaign id is required", { field: "id" });
      }
      const row = await readCampaign(deps.db.pool, req.id);
      if (!row) throw new ControlError("campaign_not_found", `no campaign with id "${req.id}"`);
      const campaign = row.campaign;
      const nodes = await readNodes(deps.db.pool, req.id);
      const now = deps.clock.now().getTime();
      const batch = nodes.filter((n) => n.batch === campaign.currentBatch);
      const facts = await readWaitFacts(
        deps.db.pool,
        campaign.id,
        campaign.currentBatch,
        batch.filter((n) => n.state === "waiting").map((n) => n.nodeId),
        [...new Set(batch.map((n) => n.pool))],
        now,
        campaign.pausedAt,
        nodes
          .filter((n) => n.state === "offered" || n.state === "applying")
          .flatMap((n) => (n.upgradeOperationId === undefined ? [] : [n.upgradeOperationId])),
      );
      const waits = waitsFor({
        campaign,
        nodes,
        now,
        online: (id) => facts.online.has(id),
        gates: facts.gates,
        pools: facts.pools,
        upgradePhases: facts.upgradePhases,
        ...(facts.pause === undefined || campaign.pausedAt === undefined
          ? {}
          : { pause: { ...facts.pause, at: campaign.pausedAt } }),
      });
      return {
        campaignId: campaign.id,
        phase: phaseToProto(campaign.phase),
        currentBatch: campaign.currentBatch,
        batchCount: campaign.batches.length,
        waits: waits.map((w) => waitToProto(w, now)),
        at: at(now),
        window: windowStateOf(campaign.spec.windows, now),
        gates: gateStatesOf(campaign.spec, facts.gates, now),
      };
    },
  };
}
