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
  options: { n: number; pool: string; state: string; finished: boolean; offset?: number },
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
     select $1, 'n' || i, 0, i, $2, $3, now(), '{}'::jsonb
       from generate_series($4::int, $4::int + $5::int - 1) as i`,
    [id, options.state, options.pool, options.offset ?? 0, options.n],
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
    await seed(db, "live", { n: 300, pool: "web", state: "offered", finished: false });
    await seed(db, "live", {
      n: 700,
      pool: "web",
      state: "waiting",
      finished: false,
      offset: 300,
    });
    await seed(db, "breached", { n: 20, pool: "web", state: "rolling_back", finished: false });
    await seed(db, "mine", { n: 50, pool: "web", state: "applying", finished: false });
    await db.pool.query("analyze");
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it("counts the other unfinished campaigns' nodes in flight, those rolling back included", async () => {
    const loads = await sqlTransaction(db.pool).poolLoads(["web"], "mine", Date.now());
    expect(loads.get("web")?.inFlightElsewhere).toBe(320);
  });

  it("reads campaign nodes through the slot index (migration 0022), never scanning their history", async () => {
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
    expect(scans.map((node) => node["Node Type"])).not.toContain("Seq Scan");
    expect(scans.map((node) => node["Index Name"]).filter(Boolean)).toContain(
      "campaign_nodes_slot_idx",
    );
  });
});
