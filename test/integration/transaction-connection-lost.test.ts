/**
 * A transaction's database connection can die while the transaction holds it between two
 * queries (an outage, a restart of PostgreSQL, an administrator ending the session). The
 * connection's error must end that transaction with an error, never escape as an uncaught
 * exception: in a Control process that would be a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inTransaction } from "../../control/campaign-store/index.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

describe("a transaction whose connection dies between its queries", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("transaction_connection_lost");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("rejects with the connection's error and raises no uncaught exception", async () => {
    const uncaught: unknown[] = [];
    const note = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", note);
    try {
      const run = inTransaction(db.pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>("select pg_backend_pid() as pid");
        await db.pool.query("select pg_terminate_backend($1)", [rows[0]?.pid]);
        // Work between queries while the connection is gone.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await client.query("select 1");
      });
      await expect(run).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(uncaught).toEqual([]);
      // The pool is still usable: the dead connection was not given back to it.
      const { rows } = await db.pool.query<{ one: number }>("select 1 as one");
      expect(rows[0]?.one).toBe(1);
    } finally {
      process.off("uncaughtException", note);
    }
  });
});
