import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

describe("database", () => {
  let db: TestDatabase;
  const log = createLogger({ level: "silent" });
  beforeAll(async () => {
    db = await createTestDatabase("migrations");
  });
  afterAll(async () => {
    await db.drop();
  });

  it("applies the committed migrations once and again as a no-op", async () => {
    const first = await openDatabase({ url: db.url, log });
    const tables = await first.pool.query(
      "select table_name from information_schema.tables where table_schema = 'public' order by 1",
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(["audit_events", "join_tokens", "nodes"]),
    );
    await first.close();
    const second = await openDatabase({ url: db.url, log });
    expect(await second.orm.getMigrator().getPendingMigrations()).toEqual([]);
    expect(await second.ping()).toBe(true);
    await second.close();
  });
});
