/**
 * Every campaign decision counts the nodes in flight per pool in other unfinished campaigns
 * (the cross-campaign pool budget). That read must follow the nodes in flight, not every
 * campaign node ever written: a fleet that ran many campaigns keeps their rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlTransaction } from "../../control/campaign-store/index.js";
import { IN_FLIGHT_ELSEWHERE_SQL } from "../../control/campaign-store/sql/reads.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

/** Seeds campaign `id` with `n` nodes of `pool` in `state`, finished or not. */
async function seed(
  db: Database,
  id: string,
  options: {
    n: number;
    pool: string;
    state: string;
    finished: boolean;
    offset?: number;
    record?: Record<string, unknown>;
  },
): Promise<void> {
  await db.pool.query(
    `insert into campaigns (id, target_version, target_sequence, phase, current_batch, state,
        created_by, created_at, updated_at, finished_at)
     values ($1, '2.0.0', 2, 'running', 0, '{}'::jsonb, 'test', now(), now(),
        case when $2 then now() end)
     on conflict (id) do nothing`,
    [id, options.finished],
  );
  await db.pool.query(
    `insert into campaign_nodes (campaign_id, node_id, batch, ord, state, pool, updated_at, record)
     select $1, 'n' || i, 0, i, $2, $3, now(), $6::jsonb
       from generate_series($4::int, $4::int + $5::int - 1) as i`,
    [
      id,
      options.state,
      options.pool,
      options.offset ?? 0,
      options.n,
      JSON.stringify(options.record ?? {}),
    ],
  );
}

/** Every plan node of an `explain (format json)` result, depth first. */
function planNodes(plan: Record<string, unknown>): Record<string, unknown>[] {
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [plan, ...children.flatMap(planNodes)];
}

describe("the pool budget read of every decision", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("pool_budget_scan");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
    // History: finished campaigns' nodes, far more than are in flight now.
    for (let c = 0; c < 4; c++) {
      await seed(db, `old-${c}`, { n: 25_000, pool: "web", state: "succeeded", finished: true });
    }
    // History of final nodes a rollback reached: its outcome recorded long ago.
    const judged = {
      rollbackOperationId: "op",
      rollbackDeadline: 0,
      rollbackResult: "rolled_back",
    };
    for (let c = 0; c < 2; c++) {
      for (const [i, state] of ["failed", "timed_out", "canceled"].entries()) {
        await seed(db, `old-rb-${c}`, {
          n: 10_000,
          pool: "web",
          state,
          finished: true,
          offset: i * 10_000,
          record: judged,
        });
      }
    }
    await seed(db, "live", { n: 300, pool: "web", state: "offered", finished: false });
    await seed(db, "live", {
      n: 700,
      pool: "web",
      state: "waiting",
      finished: false,
      offset: 300,
    });
    await seed(db, "breached", { n: 20, pool: "web", state: "rolling_back", finished: false });
    // Final nodes of the breached batch sent its rollback: 10 pending (one without a deadline,
    // 3 past it but not judged yet), 4 judged, 6 never sent one.
    const far = Date.now() + 3_600_000;
    const pending = (n: number, offset: number, state: string, record: Record<string, unknown>) =>
      seed(db, "breached", { n, pool: "web", state, finished: false, offset, record });
    await pending(5, 20, "failed", { rollbackOperationId: "op", rollbackDeadline: far });
    await pending(1, 25, "timed_out", { rollbackOperationId: "op", rollbackDeadline: far });
    await pending(1, 26, "failed", { rollbackOperationId: "op" });
    await pending(3, 27, "failed", { rollbackOperationId: "op", rollbackDeadline: 1 });
    await pending(4, 30, "failed", { ...judged, rollbackDeadline: far });
    await pending(6, 34, "canceled", {});
    await seed(db, "mine", { n: 50, pool: "web", state: "applying", finished: false });
    await db.pool.query("analyze");
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("counts the other unfinished campaigns' nodes in flight, those rolling back and the final ones with a rollback pending included", async () => {
    const loads = await sqlTransaction(db.pool).poolLoads(["web"], "mine", Date.now());
    expect(loads.get("web")?.inFlightElsewhere).toBe(300 + 20 + 10);
  });

  it("reads campaign nodes through the slot indexes (migrations 0022 and 0025), never scanning their history", async () => {
    const result = await db.pool.query(`explain (format json) ${IN_FLIGHT_ELSEWHERE_SQL}`, [
      ["web"],
      "mine",
      Date.now(),
    ]);
    const plan = (result.rows[0]["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0]?.Plan;
    const scans = planNodes(plan ?? {}).filter(
      (node) => node["Relation Name"] === "campaign_nodes",
    );
    expect(scans.length).toBeGreaterThan(0);
    expect(
      scans.map((node) => node["Node Type"]),
      JSON.stringify(plan, null, 1),
    ).not.toContain("Seq Scan");
    // An index scan names its index; a bitmap heap scan's index scans (under a BitmapOr) do.
    const indexes = planNodes(plan ?? {})
      .map((node) => node["Index Name"])
      .filter(Boolean);
    const shown = JSON.stringify(plan, null, 1);
    expect(indexes, shown).toContain("campaign_nodes_slot_idx");
    expect(indexes, shown).toContain("campaign_nodes_rollback_slot_idx");
  });
});
