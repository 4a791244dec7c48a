/**
 * The PostgreSQL adapter of the {@link FleetStore} port: `desired_versions`, `rollout_plans`,
 * the registry as the fleet rules read it, and campaign summaries, in the caller's transaction.
 */
import type pg from "pg";
import type { CampaignPhase, DesiredVersion, RolloutPlan } from "../../campaign/index.js";
import {
  type CampaignSummary,
  type CompletedCampaign,
  FAILED_NODE_STATES,
  type FleetRow,
  type FleetStore,
  type FleetTransaction,
  type PlanRow,
  PlanVersionConflict,
} from "../fleet-port.js";
import { sqlAdminNodes } from "./admin-nodes.js";
import { busySql, inList } from "./node-state-sql.js";
import { inTransaction, type Queryable } from "./reads.js";
import { sqlTransaction } from "./sql-store.js";
import { insertAudits } from "./writes.js";

/**
 * The advisory lock every campaign start takes, an administrator's or the leader's own, so
 * two starts never plan over the same idle nodes.
 */
export const START_LOCK_KEY = 7_443_002;

/** The `fleet_settings` row holding the canary-order secret (created by migration 0015). */
export const ORDER_SECRET_SETTING = "canary_order_secret";

interface DesiredDbRow {
  id: string;
  selector: DesiredVersion["selector"];
  exclude: DesiredVersion["exclude"];
  target_version: string;
  target_sequence: string;
  set_at: Date;
  set_by: string;
  settings: DesiredVersion["settings"];
  halted_at: Date | null;
  halted_reason: string | null;
}

function desiredOf(r: DesiredDbRow): DesiredVersion {
  return {
    id: r.id,
    selector: r.selector,
    exclude: r.exclude,
    target: { version: r.target_version, sequence: Number(r.target_sequence) },
    setAt: r.set_at.getTime(),
    setBy: r.set_by,
    settings: r.settings,
    haltedAt: r.halted_at?.getTime(),
    haltedReason: r.halted_reason ?? undefined,
  };
}

interface SummaryDbRow {
  id: string;
  created_by: string;
  phase: CampaignPhase;
  created_at: Date;
  finished_at: Date | null;
  failed: string[] | null;
}

const SUMMARY = `select c.id, c.created_by, c.phase, c.created_at, c.finished_at,
         (select array_agg(cn.node_id order by cn.node_id) from campaign_nodes cn
           where cn.campaign_id = c.id and ${inList("cn.state", FAILED_NODE_STATES)}) as failed
    from campaigns c`;

function summaryOf(r: SummaryDbRow): CampaignSummary {
  return {
    id: r.id,
    createdBy: r.created_by,
    phase: r.phase,
    createdAt: r.created_at.getTime(),
    finishedAt: r.finished_at?.getTime(),
    failedNodeIds: r.failed ?? [],
  };
}

/** The fleet transaction over one client inside `begin … commit`. */
export function sqlFleetTransaction(client: pg.ClientBase | Queryable): FleetTransaction {
  const q = client as Queryable;
  return {
    campaigns: sqlTransaction(q),
    nodes: sqlAdminNodes(q),
    async lockStarts() {
      await q.query("select pg_advisory_xact_lock($1)", [START_LOCK_KEY]);
    },
    async readFleet(): Promise<FleetRow[]> {
      const result = await q.query<{
        id: string;
        labels: Record<string, string>;
        pool: string;
        enabled: boolean;
        ever: boolean;
        capabilities: string[];
        agent_version: string;
        platform: string;
        confirmed_sequence: string;
        running_sequence: string | null;
        online: boolean;
        held_by: string | null;
        busy_in: string | null;
      }>(
        `select n.id, n.labels, n.pool, n.enabled and not n.pending as enabled, n.first_seen is not null as ever, n.capabilities,
                n.agent_version, n.platform, n.confirmed_sequence, r.sequence as running_sequence, n.online,
                n.held_by,
                (select c.id from campaign_nodes cn join campaigns c on c.id = cn.campaign_id
                  where cn.node_id = n.id and c.finished_at is null
                    and ${busySql("cn", "c")}
                  order by c.created_at, c.id limit 1) as busy_in
           from nodes n left join releases r on r.version = n.agent_version
          order by n.id`,
      );
      return result.rows.map((r) => ({
        id: r.id,
        labels: r.labels,
        pool: r.pool,
        enabled: r.enabled,
        everConnected: r.ever,
        capabilities: r.capabilities,
        agentVersion: r.agent_version,
        platform: r.platform,
        confirmedSequence: Number(r.confirmed_sequence),
        runningSequence: r.running_sequence === null ? undefined : Number(r.running_sequence),
        online: r.online,
        heldBy: r.held_by,
        busy: r.busy_in !== null,
        busyIn: r.busy_in ?? undefined,
      }));
    },
    async readOrderSecret(): Promise<string> {
      const result = await q.query<{ value: string }>(
        "select value from fleet_settings where name = $1",
        [ORDER_SECRET_SETTING],
      );
      const value = result.rows[0]?.value;
      if (value === undefined || value === "") {
        throw new Error(`fleet_settings has no ${ORDER_SECRET_SETTING} (migration 0015 not run)`);
      }
      return value;
    },
    async readDesired() {
      const result = await q.query<DesiredDbRow>(
        "select * from desired_versions order by set_at, id",
      );
      return result.rows.map(desiredOf);
    },
    async writeDesired(d) {
      await q.query(
        `insert into desired_versions (id, selector, exclude, target_version, target_sequence,
            set_at, set_by, settings, halted_at, halted_reason)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         on conflict (id) do update set selector = excluded.selector, exclude = excluded.exclude,
            target_version = excluded.target_version, target_sequence = excluded.target_sequence,
            set_at = excluded.set_at, set_by = excluded.set_by, settings = excluded.settings,
            halted_at = excluded.halted_at, halted_reason = excluded.halted_reason`,
        [
          d.id,
          JSON.stringify(d.selector),
          JSON.stringify(d.exclude),
          d.target.version,
          d.target.sequence,
          new Date(d.setAt),
          d.setBy,
          JSON.stringify(d.settings),
          d.haltedAt === undefined ? null : new Date(d.haltedAt),
          d.haltedReason ?? null,
        ],
      );
    },
    async deleteDesired(id) {
      const result = await q.query("delete from desired_versions where id = $1", [id]);
      return (result.rowCount ?? 0) > 0;
    },
    async completionsToRecord(): Promise<CompletedCampaign[]> {
      const result = await q.query<{ id: string; created_by: string; finished_at: Date }>(
        `select id, created_by, finished_at from campaigns
          where desired_recorded_at is null and phase = 'completed' and finished_at is not null
          order by finished_at, id`,
      );
      return result.rows.map((r) => ({
        id: r.id,
        createdBy: r.created_by,
        finishedAt: r.finished_at.getTime(),
      }));
    },
    async markRecorded(ids) {
      if (ids.length === 0) return;
      await q.query("update campaigns set desired_recorded_at = now() where id = any($1::text[])", [
        ids,
      ]);
    },
    async campaignsCreatedBy(prefix) {
      const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const result = await q.query<SummaryDbRow>(
        `${SUMMARY} where c.created_by like $1 order by c.created_at, c.id`,
        [like],
      );
      return result.rows.map(summaryOf);
    },
    async campaignSummaries(ids) {
      if (ids.length === 0) return [];
      const result = await q.query<SummaryDbRow>(
        `${SUMMARY} where c.id = any($1::text[]) order by c.created_at, c.id`,
        [ids],
      );
      return result.rows.map(summaryOf);
    },
    async readPlans(live) {
      const result = await q.query<{ state: RolloutPlan; version: number }>(
        `select state, version from rollout_plans ${live ? "where phase = 'running'" : ""}
          order by created_at desc, id desc`,
      );
      return result.rows.map((r) => ({ plan: r.state, version: r.version }));
    },
    async readPlan(id): Promise<PlanRow | undefined> {
      const result = await q.query<{ state: RolloutPlan; version: number }>(
        "select state, version from rollout_plans where id = $1",
        [id],
      );
      const r = result.rows[0];
      return r === undefined ? undefined : { plan: r.state, version: r.version };
    },
    async insertPlan(plan, now) {
      await q.query(
        `insert into rollout_plans (id, phase, state, created_by, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6)`,
        [plan.id, plan.phase, JSON.stringify(plan), plan.createdBy, new Date(plan.createdAt), now],
      );
    },
    async writePlan(plan, version, now) {
      const result = await q.query(
        `update rollout_plans set phase = $2, state = $3, updated_at = $4, version = version + 1
          where id = $1 and version = $5`,
        [plan.id, plan.phase, JSON.stringify(plan), now, version],
      );
      if ((result.rowCount ?? 0) === 0)
        throw new PlanVersionConflict(`plan ${plan.id} changed since version ${version}`);
    },
    insertAudits: (rows, now) => insertAudits(q, rows, now),
    async insertCommand(c, now) {
      const inserted = await q.query<{ id: string }>(
        `insert into campaign_commands (campaign_id, kind, rollback, gate, reason, actor, actor_ip, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning id::text as id`,
        [c.campaignId, c.kind, c.rollback, c.gate ?? null, c.reason, c.actor, c.actorIp, now],
      );
      return inserted.rows[0]?.id ?? "";
    },
  };
}

/** The fleet store on Control's database. */
export function createSqlFleetStore(pool: pg.Pool): FleetStore {
  return {
    transaction: (work) => inTransaction(pool, (client) => work(sqlFleetTransaction(client))),
  };
}
