/**
 * Control's connection to PostgreSQL: MikroORM for entities and migrations, plus a plain
 * `pg` pool for the few hot paths that write many rows in one statement (`unnest`), where
 * an identity map would only cost time.
 */

import { Migrator } from "@mikro-orm/migrations";
import type { EntityManager } from "@mikro-orm/postgresql";
import { MikroORM } from "@mikro-orm/postgresql";
import pg from "pg";
import type { Logger } from "../log.js";
import { ENTITIES } from "./entities/index.js";
import { MIGRATIONS } from "./migrations/index.js";
import {
  judgeSchemaRelease,
  type RunSql,
  readSchemaRelease,
  recordSchemaRelease,
  SCHEMA_RELEASE,
  SchemaTooNewError,
} from "./schema-release.js";

/** An open database: the ORM and a raw pool over the same server. */
export interface Database {
  readonly orm: MikroORM;
  /** For batched statements with `$n` parameters; no identity map. */
  readonly pool: pg.Pool;
  /** A fresh EntityManager for one unit of work. */
  em(): EntityManager;
  /** True when a trivial query succeeds within a second. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  readonly url: string;
  readonly log: Logger;
  /** Apply pending migrations (default true). */
  readonly migrate?: boolean;
  /** Connections of the ORM's pool (default 10; admin reads and writes). */
  readonly poolSize?: number;
  /**
   * Connections of the raw pool (default {@link RAW_POOL_SIZE}): the worker's lease holds
   * one, coalesced handshakes use up to 8 during a reconnect storm, and the campaign
   * decisions, report flushes and liveness flushes must still find one then.
   */
  readonly rawPoolSize?: number;
}

/** Default size of the raw pool; with the ORM's 10, one Control uses at most 30 connections. */
export const RAW_POOL_SIZE = 20;

/**
 * Connects, applies pending migrations, records the schema release, and returns the open
 * database. Throws {@link SchemaTooNewError}, having changed nothing, when the schema is more
 * than one release ahead of this Control.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const log = options.log.child({ component: "db" });
  const orm = await MikroORM.init({
    clientUrl: options.url,
    entities: ENTITIES,
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, transactional: true, allOrNothing: true },
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    pool: { min: 0, max: options.poolSize ?? 10 },
    debug: false,
    logger: (message) => log.debug(message),
  });
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.rawPoolSize ?? options.poolSize ?? RAW_POOL_SIZE,
  });
  pool.on("error", (error) => log.warn({ err: error.message }, "idle database connection failed"));
  const run: RunSql = async (sql, params) => (await pool.query(sql, params as unknown[])).rows;
  try {
    // Before anything is migrated: a schema too far ahead is left exactly as it is.
    const verdict = judgeSchemaRelease(await readSchemaRelease(run), SCHEMA_RELEASE);
    switch (verdict.kind) {
      case "migrate":
        break;
      case "one_ahead":
        log.info(
          verdict,
          "the schema is one release ahead of this Control: it runs beside a newer one",
        );
        break;
      case "too_new":
        throw new SchemaTooNewError(verdict.stored, verdict.known);
      default: {
        const unexpected: never = verdict;
        throw new Error(`unexpected schema verdict: ${JSON.stringify(unexpected)}`);
      }
    }
    if (options.migrate ?? true) {
      const applied = await orm.getMigrator().up();
      if (applied.length > 0) {
        log.info(
          { migrations: applied.map((m) => m.name), schemaRelease: SCHEMA_RELEASE },
          "migrations applied",
        );
      }
      await recordSchemaRelease(run, SCHEMA_RELEASE);
    }
  } catch (error) {
    await pool.end();
    await orm.close(true);
    throw error;
  }
  return {
    orm,
    pool,
    em: () => orm.em.fork(),
    async ping() {
      try {
        const client = await pool.connect();
        try {
          await client.query({ text: "SELECT 1", query_timeout: 1000 } as pg.QueryConfig);
          return true;
        } finally {
          client.release();
        }
      } catch {
        return false;
      }
    },
    async close() {
      await pool.end();
      await orm.close(true);
    },
  };
}
