/**
 * The PostgreSQL adapter of the campaign store contract: the product's store on a real
 * database, created once per test file and truncated before each test.
 */
import { createSqlCampaignStore } from "../../../control/campaign-store/index.js";
import { systemClock } from "../../../control/clock.js";
import { type Database, openDatabase } from "../../../control/db/database.js";
import { createLogger } from "../../../control/log.js";
import { sha256Hex } from "../../../control/shared/release/index.js";
import { createTestDatabase, type TestDatabase } from "../../helpers/database.js";
import { at } from "./builders.js";
import type { Adapter, OperationStamps } from "./fixture.js";

const silent = createLogger({ level: "silent" });

/** The PostgreSQL store on a database of its own; `fresh` empties every table it writes. */
export function sqlAdapter(): Adapter {
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;
  const database = () => db as Database;
  return {
    name: "PostgreSQL",
    async open() {
      testDb = await createTestDatabase("store_contract");
      db = await openDatabase({ url: testDb.url, log: silent });
    },
    async close() {
      await db?.close();
      await testDb?.drop();
    },
    async fresh() {
      const pool = database().pool;
      await pool.query(
        `truncate nodes, releases, campaigns, campaign_nodes, campaign_operations,
           campaign_config_failures, campaign_commands, control_leases, audit_events
         restart identity cascade`,
      );
      return {
        store: createSqlCampaignStore(database(), silent, systemClock),
        async putNode(row) {
          await pool.query(
            `insert into nodes (id, pool, boot_id, agent_version, capabilities, platform, enabled,
                last_seen, online, held_by, revoked_at)
             values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11)`,
            [
              row.id,
              row.pool,
              row.boot_id,
              row.agent_version,
              JSON.stringify(row.capabilities),
              row.platform,
              row.enabled,
              row.last_seen,
              row.online ?? false,
              row.held_by ?? null,
              row.revoked === true ? new Date("2026-01-01T00:00:00Z") : null,
            ],
          );
        },
        async helloOn(nodeId, version) {
          await pool.query("update nodes set agent_version = $2 where id = $1", [nodeId, version]);
        },
        async confirmedSequence(nodeId) {
          const result = await pool.query<{ confirmed_sequence: string }>(
            "select confirmed_sequence from nodes where id = $1",
            [nodeId],
          );
          const value = result.rows[0]?.confirmed_sequence;
          return value === undefined ? undefined : Number(value);
        },
        async yankRelease(version, reason, when, by) {
          await pool.query(
            `update releases set yanked_at = $2, yanked_by = $3, yank_reason = $4
              where version = $1 and yanked_at is null`,
            [version, when, by, reason],
          );
        },
        async putRelease(r) {
          await pool.query(
            `insert into releases (version, sequence, envelope, envelope_sha256, expires_at,
                registered_at, registered_by, signer_key_ids, artifacts)
             values ($1, $2, $3, $4, $5, $6, 'tester', '[]'::jsonb, $7::jsonb)`,
            [
              r.version,
              r.sequence,
              Buffer.from(r.envelope),
              sha256Hex(r.envelope),
              new Date(r.expiresAt),
              at(0),
              JSON.stringify(r.artifacts),
            ],
          );
        },
        async addCommand(campaignId, kind, rollback) {
          const result = await pool.query<{ id: string }>(
            `insert into campaign_commands (campaign_id, kind, rollback, reason, actor, actor_ip,
                created_at)
             values ($1, $2, $3, $4, 'operator', '10.0.0.1', $5) returning id::text as id`,
            [campaignId, kind, rollback, `${kind} please`, at(0)],
          );
          return result.rows[0]?.id as string;
        },
        async endSession(holder) {
          const rows = await pool.query<{ pid: number }>(
            "select holder_pid as pid from control_leases where holder = $1",
            [holder],
          );
          for (const { pid } of rows.rows) {
            await pool.query("select pg_terminate_backend($1, 10000)", [pid]);
          }
        },
        async untilLeaseWaits() {
          for (let i = 0; i < 500; i++) {
            const waiting = await pool.query<{ n: number }>(
              "select count(*)::int as n from pg_locks where not granted",
            );
            if ((waiting.rows[0]?.n ?? 0) > 0) return;
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          throw new Error("no lease statement waited for the transaction");
        },
        async operation(id) {
          const result = await pool.query<OperationStamps>(
            "select acked_at, last_sent_at, send_count from campaign_operations where id = $1",
            [id],
          );
          return result.rows[0];
        },
        async command(id) {
          const result = await pool.query<{ applied_at: Date | null; outcome: string | null }>(
            "select applied_at, outcome from campaign_commands where id = $1",
            [id],
          );
          return result.rows[0];
        },
        async audits(campaignId) {
          const result = await pool.query<{
            action: string;
            actor: string;
            message: string;
            time: Date;
          }>(
            "select action, actor, message, time from audit_events where campaign_id = $1 order by id",
            [campaignId],
          );
          return result.rows;
        },
      };
    },
  };
}
