/**
 * The campaign engine as Control wires it (its composition root): the worker (started once the admin server knows
 * its public URL), the CampaignService and AuditService routes, and the "active campaign of
 * a node" lookup the NodeService shows.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { AuditService } from "../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitsService } from "../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { FleetService } from "../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import {
  DesiredVersionService,
  PlanService,
} from "../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { createAuditService } from "./admin/audit-service.js";
import type { TokenEntry } from "./admin/auth.js";
import { createCampaignService } from "./admin/campaign-service.js";
import { createCampaignWaitsService } from "./admin/campaign-waits-service.js";
import { createDesiredService } from "./admin/desired-service.js";
import { createFleetService } from "./admin/fleet-service.js";
import { createPlanService } from "./admin/plan-service.js";
import type { Policy } from "./campaign/index.js";
import { busyNodes, createSqlCampaignStore, createSqlFleetStore } from "./campaign-store/index.js";
import type { WorkerGateway } from "./campaign-worker/facts.js";
import { createHttpGateProbe } from "./campaign-worker/gate-http.js";
import type { WorkerObserver } from "./campaign-worker/observer.js";
import { type CampaignWorker, createCampaignWorker } from "./campaign-worker/worker.js";
import type { Clock } from "./clock.js";
import type { ControlConfig } from "./config.js";
import type { Database } from "./db/database.js";
import type { Logger } from "./log.js";
import { unlistedReason } from "./tuf/listed.js";

/** The campaign policy of a Control configuration (`policy.*`, `timeouts.*`). */
export function policyOf(config: ControlConfig): Policy {
  return {
    minBatchDurationMs: config.policy.minBatchDurationSeconds * 1000,
    firstBatchMaxPercent: config.policy.firstBatchMaxPercent,
    maxBatches: config.policy.maxBatches,
    reconnectTimeoutMs: config.timeouts.reconnectSeconds * 1000,
    configGraceMs: config.timeouts.configGraceSeconds * 1000,
  };
}

/** Options of {@link createCampaignEngine}. */
export interface CampaignEngineOptions {
  readonly db: Database;
  readonly gateway: WorkerGateway;
  readonly clock: Clock;
  readonly log: Logger;
  readonly config: ControlConfig;
  /** This process's unique id (the lease holder). */
  readonly instanceId: string;
  readonly publicUrl: () => string;
  /** Told of the worker's decisions and leadership (Control's metrics). */
  readonly observer?: WorkerObserver;
  /** The admin tokens in force (live view): a watch whose token leaves them ends. */
  readonly adminTokens?: readonly TokenEntry[];
}

/** The campaign engine of one Control. */
export interface CampaignEngine {
  readonly worker: CampaignWorker;
  /** Registers CampaignService, CampaignWaitsService, AuditService, FleetService and the rollout services. */
  routes(router: ConnectRouter): void;
  /** The unfinished campaign each of `nodeIds` belongs to. */
  activeCampaignOf(nodeIds: readonly string[]): Promise<Map<string, string>>;
  /** Starts the worker loop (idempotent). */
  start(): void;
  /** Stops the worker and gives its lease up. */
  stop(): Promise<void>;
}

/** Builds the engine; the worker runs from {@link CampaignEngine.start}. */
export function createCampaignEngine(o: CampaignEngineOptions): CampaignEngine {
  const tufDir = o.config.tuf?.dir;
  const worker = createCampaignWorker({
    store: createSqlCampaignStore(o.db, o.log, o.clock),
    gateway: o.gateway,
    clock: o.clock,
    log: o.log,
    holder: o.instanceId,
    intervalMs: o.config.worker.intervalMs,
    publicUrl: o.publicUrl,
    gateProbe: createHttpGateProbe({ allowedHosts: o.config.gates.allowedHosts }),
    offlineAfterMs: o.config.timeouts.offlineAfterSeconds * 1000,
    fleet: {
      store: createSqlFleetStore(o.db.pool),
      intervalMs: o.config.worker.convergenceIntervalMs,
      onHalted: (desiredId) => o.observer?.convergenceHalted?.(desiredId),
      rules: { policy: policyOf(o.config), maxVersion: o.config.agent.maxVersion },
      unlisted: tufDir === undefined ? undefined : (v, s) => unlistedReason(tufDir, v, s),
    },
    ...(o.observer ? { observer: o.observer } : {}),
  });
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  return {
    worker,
    routes(router) {
      router.service(
        CampaignService,
        createCampaignService({
          db: o.db,
          clock: o.clock,
          policy: policyOf(o.config),
          maxVersion: o.config.agent.maxVersion,
          tufDir: o.config.tuf?.dir,
          gateHosts: o.config.gates.allowedHosts,
          worker,
          ...(o.adminTokens ? { adminTokens: o.adminTokens } : {}),
        }),
      );
      router.service(
        CampaignWaitsService,
        createCampaignWaitsService({ db: o.db, clock: o.clock }),
      );
      router.service(AuditService, createAuditService({ db: o.db }));
      const fleetDeps = {
        db: o.db,
        clock: o.clock,
        policy: policyOf(o.config),
        maxVersion: o.config.agent.maxVersion,
        tufDir: o.config.tuf?.dir,
        gateHosts: o.config.gates.allowedHosts,
        wake: (campaignId?: string) => worker.wake(campaignId),
      };
      router.service(DesiredVersionService, createDesiredService(fleetDeps));
      router.service(PlanService, createPlanService(fleetDeps));
      router.service(FleetService, createFleetService({ db: o.db, clock: o.clock }));
    },
    activeCampaignOf: (nodeIds) => busyNodes(o.db.pool, nodeIds),
    start() {
      running ??= worker.run(controller.signal);
    },
    async stop() {
      controller.abort();
      await running;
    },
  };
}
