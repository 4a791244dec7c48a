/**
 * The lease moves to a Control that knows more: a Control that is not the leader takes the
 * campaign worker's lease over from a live holder when an unfinished campaign records engine
 * features that this Control knows and the holder does not (the holder's known features are
 * recorded beside the lease's epoch; a holder of the previous release records none, so its
 * `features_epoch` never matches). The fenced holder loses its next renewal and its writes. No
 * takeover while every live campaign's features are the holder's too. Real PostgreSQL.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeaderLease } from "../../control/campaign-store/sql/lease.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

const log = createLogger({ level: "silent" });
const ALL = ["deferral", "download_budget", "lost_after_upgrade", "report_seq"];

describe("the leader lease and engine features", () => {
  let testDb: TestDatabase;
  let db: Database;
  let previous: pg.Client;
  beforeAll(async () => {
    testDb = await createTestDatabase("lease_features");
    db = await openDatabase({ url: testDb.url, log });
    previous = new pg.Client({ connectionString: testDb.url });
    await previous.connect();
  });
  afterAll(async () => {
    await previous?.end();
    await db?.close();
    await testDb?.drop();
  });

  /** The previous release's acquisition, as it runs it (it writes no features). */
  const previousTakes = async () => {
    await previous.query("delete from control_leases where name = 'campaign-worker'");
    const taken = await previous.query(
      `insert into control_leases (name, holder, holder_pid, epoch, expires_at)
       values ('campaign-worker', 'previous-1-x', pg_backend_pid(), 1, now() + interval '1 minute')
       returning epoch`,
    );
    expect(taken.rowCount).toBe(1);
  };
  const campaign = async (id: string, features: string[]) => {
    await db.pool.query(
      `insert into campaigns (id, target_version, target_sequence, phase, current_batch, state,
          created_by, created_by_ip, created_at, updated_at, engine_features)
       values ($1, '2.0.0', 2, 'running', 0, '{}', 't', '', now(), now(), $2::text[])`,
      [id, features],
    );
  };
  const holder = async () =>
    (
      await db.pool.query<{ holder: string; epoch: string }>(
        "select holder, epoch from control_leases where name = 'campaign-worker'",
      )
    ).rows[0];

  it("leaves a live previous-release holder alone while no live campaign records a feature", async () => {
    await previousTakes();
    await campaign("old-1", []);
    const head = createLeaderLease({
      pool: db.pool,
      log,
      holder: "head-1",
      ttlMs: 60_000,
      engineFeatures: ALL,
    });
    expect(await head.tick()).toBe(false);
    expect((await holder())?.holder).toBe("previous-1-x");
    await head.release();
  });

  it("takes the lease over from a previous-release holder once a live campaign records features it knows", async () => {
    await campaign("new-1", ["deferral", "report_seq"]);
    const head = createLeaderLease({
      pool: db.pool,
      log,
      holder: "head-1",
      ttlMs: 60_000,
      engineFeatures: ALL,
    });
    expect(await head.tick()).toBe(true);
    expect(await holder()).toEqual({ holder: "head-1", epoch: "2" });
    // The previous release's renewal finds another holder: it stops leading.
    const renewed = await previous.query(
      `update control_leases set expires_at = now() + interval '1 minute'
        where name = 'campaign-worker' and holder = 'previous-1-x' and epoch = 1
          and holder_pid = pg_backend_pid()`,
    );
    expect(renewed.rowCount).toBe(0);
    // A Control that knows the same features does not take it from this holder.
    const peer = createLeaderLease({
      pool: db.pool,
      log,
      holder: "head-2",
      ttlMs: 60_000,
      engineFeatures: ALL,
    });
    expect(await peer.tick()).toBe(false);
    // Nor does one that knows fewer (an older release's with this code), whatever it leads.
    const older = createLeaderLease({
      pool: db.pool,
      log,
      holder: "older-1",
      ttlMs: 60_000,
      engineFeatures: ["deferral"],
    });
    expect(await older.tick()).toBe(false);
    expect((await holder())?.holder).toBe("head-1");
    await peer.release();
    await older.release();
    await head.release();
  });

  it("hands it to a Control that knows a feature the holder lacks (the next release beside this one)", async () => {
    await db.pool.query("update campaigns set finished_at = now()");
    const head = createLeaderLease({
      pool: db.pool,
      log,
      holder: "head-1",
      ttlMs: 60_000,
      engineFeatures: ALL,
    });
    expect(await head.tick()).toBe(true);
    await campaign("next-1", [...ALL, "teleport"]);
    const next = createLeaderLease({
      pool: db.pool,
      log,
      holder: "next-1",
      ttlMs: 60_000,
      engineFeatures: [...ALL, "teleport"],
    });
    expect(await next.tick()).toBe(true);
    expect((await holder())?.holder).toBe("next-1");
    // The former holder's renewal fails: it no longer leads.
    expect(await head.tick()).toBe(false);
    await head.release();
    await next.release();
  });
});
