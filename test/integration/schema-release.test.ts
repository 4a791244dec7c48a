/**
 * The schema release on PostgreSQL: Control records its release after migrating, never lowers a
 * newer one it runs beside, and a Control process refuses a schema more than one release ahead
 * of it with one line on stderr and exit 2, migrating nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../control/db/database.js";
import { SCHEMA_RELEASE, SchemaTooNewError } from "../../control/db/schema-release.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { runControl } from "../helpers/process-fixtures.js";

const log = createLogger({ level: "silent" });

/** Runs Control's process to its exit against `url` ({@link runControl}). */
const runControlOn = (args: readonly string[], url: string, dataDir: string) =>
  runControl(args, {
    DATABASE_URL: url,
    AGENT_CONTROL_DATA_DIR: dataDir,
    AGENT_CONTROL_AGENT_ADDR: "127.0.0.1:0",
    AGENT_CONTROL_ADMIN_ADDR: "127.0.0.1:0",
    AGENT_CONTROL_ADMIN_TOKEN: "schema-release-operator-token-0123456789",
    AGENT_CONTROL_LOG_LEVEL: "warn",
  });

describe("the schema release", { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let dir: string;
  const release = async () =>
    (await sql.query<{ release: number }>("select release from schema_release")).rows.map(
      (r) => r.release,
    );

  beforeAll(async () => {
    db = await createTestDatabase("schema_release");
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    dir = await mkdtemp(join(tmpdir(), "agent-control-schema-release-"));
  });

  afterAll(async () => {
    await sql?.end();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("is recorded as this Control's after it migrates a new database", async () => {
    await (await openDatabase({ url: db.url, log })).close();
    expect(await release()).toEqual([SCHEMA_RELEASE]);
  });

  it("stays one release ahead when a Control of the release before opens it", async () => {
    await sql.query("update schema_release set release = $1", [SCHEMA_RELEASE + 1]);
    const opened = await openDatabase({ url: db.url, log });
    expect(await opened.ping()).toBe(true);
    await opened.close();
    expect(await release()).toEqual([SCHEMA_RELEASE + 1]);
  });

  it("two releases ahead: openDatabase refuses before migrating anything", async () => {
    await sql.query("update schema_release set release = $1", [SCHEMA_RELEASE + 2]);
    // A migration this Control would apply, made pending again: a refusal leaves it pending.
    await sql.query("drop table fleet_settings");
    await sql.query("delete from mikro_orm_migrations where name = '0017-fleet-settings'");
    await expect(openDatabase({ url: db.url, log })).rejects.toThrow(SchemaTooNewError);
    expect((await sql.query("select to_regclass('fleet_settings') as t")).rows[0].t).toBeNull();
    expect(await release()).toEqual([SCHEMA_RELEASE + 2]);
  });

  it.each([
    ["one Control", []],
    ["--workers 2", ["--workers", "2"]],
  ])(
    "two releases ahead, %s: exit 2 with one line naming both releases, nothing migrated",
    async (_, args) => {
      const result = await runControlOn(args, db.url, join(dir, `data-${args.length}`));
      expect(result.stderr).toBe(
        `control: database schema is at release ${SCHEMA_RELEASE + 2}, more than one release ahead of this Control (release ${SCHEMA_RELEASE}); run a Control of release ${SCHEMA_RELEASE + 1} or newer (docs/operator-guide.md, Upgrading Control)\n`,
      );
      expect(result.code).toBe(2);
      expect((await sql.query("select to_regclass('fleet_settings') as t")).rows[0].t).toBeNull();
      expect(await release()).toEqual([SCHEMA_RELEASE + 2]);
    },
  );
});
