/**
 * The outbox leaves room on its pages: a migrated database's `campaign_operations` has
 * fillfactor 70, so the updates every operation row receives (the send stamp, one report per
 * phase) find room on the row's own page and, where no indexed column changes, touch no index.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

describe("the outbox's page headroom", { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let sql: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase("operations_headroom");
    await (await openDatabase({ url: db.url, log: createLogger({ level: "silent" }) })).close();
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  afterAll(async () => {
    await sql?.end();
    await db?.drop();
  });

  it("is fillfactor 70 on campaign_operations, and only there", async () => {
    const { rows } = await sql.query<{ relname: string; reloptions: string[] | null }>(
      `select relname, reloptions from pg_class
        where relname in ('campaign_operations', 'campaign_nodes', 'nodes') order by relname`,
    );
    expect(rows).toEqual([
      { relname: "campaign_nodes", reloptions: null },
      { relname: "campaign_operations", reloptions: ["fillfactor=70"] },
      { relname: "nodes", reloptions: null },
    ]);
  });
});
