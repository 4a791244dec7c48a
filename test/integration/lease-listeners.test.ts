/**
 * The leader lease's connection listeners stay bounded. A Control that does not lead ticks
 * its lease every `ttl / 3` and hands the connection back to the pool after each tick that
 * did not take the lease; every Control but one under `--workers` does so for as long as it
 * runs. An 'error' listener added per tick and never removed piled up on the pooled client
 * until Node warned `MaxListenersExceededWarning: Possible EventEmitter memory leak
 * detected. 11 error listeners added to [Client]`.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeaderLease } from "../../control/campaign-store/sql/lease.js";
import { openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

const log = createLogger({ level: "silent" });

describe("the leader lease of a Control that does not lead", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);

  beforeAll(async () => {
    database = await createTestDatabase("lease_listeners");
    const db = await openDatabase({ url: database.url, log });
    await db.close();
    // One connection: every tick gets the same pooled client back, as a quiet Control's do.
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    process.on("warning", onWarning);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await pool?.end();
    await database?.drop();
  });

  it("leaves no listener of its own on the pooled connection after 30 ticks that did not take the lease", async () => {
    const leader = createLeaderLease({ pool, holder: "leader", ttlMs: 60_000, log });
    expect(await leader.tick()).toBe(true);
    await leader.release();
    // The leader's row names a live backend: hold it with a connection outside the pool.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query(
        `update control_leases set holder = 'other', holder_pid = pg_backend_pid(),
           expires_at = now() + interval '1 hour' where name = 'campaign-worker'`,
      );
      const client = await pool.connect();
      const before = {
        error: client.listenerCount("error"),
        notification: client.listenerCount("notification"),
      };
      client.release();

      const follower = createLeaderLease({ pool, holder: "follower", ttlMs: 60_000, log });
      for (let i = 0; i < 30; i++) expect(await follower.tick()).toBe(false);
      await follower.release();

      const after = await pool.connect();
      try {
        expect(after).toBe(client);
        expect({
          error: after.listenerCount("error"),
          notification: after.listenerCount("notification"),
        }).toEqual(before);
      } finally {
        after.release();
      }
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});
