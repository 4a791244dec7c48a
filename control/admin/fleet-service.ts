/**
 * `agentcontrol.admin.v1.FleetService`: the fleet at a glance in one read (nodes by version
 * and pool, every desired version's convergence and why nodes are behind), so a dashboard of
 * 10,000 nodes pages through none of them. Judged by the pure `summarizeFleet` over the
 * registry (liveness as the registry records it, on any Control), the desired versions and
 * the convergence campaigns. Reads only.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  BehindReasonSchema,
  DesiredConvergenceSchema,
  type FleetService,
  PoolCountSchema,
  VersionCountSchema,
} from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import {
  CONVERGENCE_CREATOR,
  type ConvergenceRun,
  type FleetNode,
  summarizeFleet,
} from "../campaign/index.js";
import { createSqlFleetStore, type FleetRow } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { desiredMessageOf } from "./desired-service.js";
import { verifyingNodeIds } from "./node-status-reads.js";

/** What the service needs. */
export interface FleetServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
}

/** A registry row as the pure rules read it. */
function fleetNodeOf(r: FleetRow): FleetNode {
  return {
    id: r.id,
    labels: r.labels,
    pool: r.pool,
    enabled: r.enabled,
    everConnected: r.everConnected,
    capabilities: r.capabilities,
    agentVersion: r.agentVersion || undefined,
    platform: r.platform || undefined,
    confirmedSequence: r.confirmedSequence,
    runningSequence: r.runningSequence,
    online: r.online,
    busy: r.busy,
  };
}

/**
 * The revoked nodes per pool: cut off by an administrator until they enroll again, so never
 * online, and counted apart from the nodes that are merely offline.
 */
async function revokedByPool(db: Database): Promise<Map<string, number>> {
  const result = await db.pool.query<{ pool: string; revoked: number }>(
    "select pool, count(*)::int as revoked from nodes where revoked_at is not null and not online group by pool",
  );
  return new Map(result.rows.map((r) => [r.pool, r.revoked]));
}

/** Builds the FleetService implementation. */
export function createFleetService(deps: FleetServiceDeps): ServiceImpl<typeof FleetService> {
  const store = createSqlFleetStore(deps.db.pool);
  return {
    async getFleetSummary() {
      const read = await store.transaction(async (tx) => ({
        rows: await tx.readFleet(),
        desired: await tx.readDesired(),
        runs: await tx.campaignsCreatedBy(CONVERGENCE_CREATOR),
      }));
      const revoked = await revokedByPool(deps.db);
      const verifying = await verifyingNodeIds(deps.db);
      const runs: ConvergenceRun[] = read.runs.map((c) => ({
        campaignId: c.id,
        desiredId: c.createdBy.slice(CONVERGENCE_CREATOR.length),
        createdAt: c.createdAt,
        finished: c.finishedAt !== undefined,
        failedNodeIds: c.failedNodeIds,
        phase: c.phase,
      }));
      const newest = [...read.desired].sort((a, b) => b.setAt - a.setAt || (a.id < b.id ? -1 : 1));
      const s = summarizeFleet({
        fleet: read.rows.map(fleetNodeOf),
        desired: newest,
        runs,
        now: deps.clock.now().getTime(),
      });
      return {
        nodes: s.nodes,
        online: s.online,
        revoked: [...revoked.values()].reduce((sum, n) => sum + n, 0),
        versions: s.versions.map((v) =>
          create(VersionCountSchema, { version: v.key, nodes: v.nodes, online: v.online }),
        ),
        pools: s.pools.map((p) =>
          create(PoolCountSchema, {
            pool: p.key,
            nodes: p.nodes,
            online: p.online,
            disabled: p.disabled,
            revoked: revoked.get(p.key) ?? 0,
          }),
        ),
        desired: s.desired.map((c) =>
          create(DesiredConvergenceSchema, {
            desired: desiredMessageOf(c.desired, read.rows, read.desired, verifying),
            state: c.state,
            behind: c.behind,
            reasons: c.reasons.map((r) =>
              create(BehindReasonSchema, {
                code: r.code,
                text: r.text,
                nodes: r.nodes,
                nodeIds: [...r.nodeIds],
              }),
            ),
            failedNodeIds: [...c.failedNodeIds],
            ahead: c.ahead,
            aheadNodeIds: [...c.aheadNodeIds],
          }),
        ),
        at: timestampFromDate(deps.clock.now()),
      };
    },
  };
}
