/**
 * What the SQL campaign store keeps across releases: the engine features a campaign uses,
 * recorded in their own column when it is created, and the fields of a stored record this
 * release does not know (a newer release's, running beside it), kept when a decision rewrites
 * the record. A field this release knows and leaves undefined is removed as before. Real
 * PostgreSQL, through the store's port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCampaign, planCampaign, resolveSpec } from "../../control/campaign/index.js";
import { sqlTransaction } from "../../control/campaign-store/index.js";
import { inTransaction } from "../../control/campaign-store/sql/reads.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

const T0 = 1_700_000_000_000;

describe("campaign records across releases (SQL store)", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("record_merge");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const insert = async (id: string, maxDownloads?: number) => {
    const spec = resolveSpec({
      targetVersion: "2.0.0",
      batches: [{ percent: 100, minDurationMs: 0 }],
      ...(maxDownloads === undefined ? {} : { maxDownloads }),
    });
    const plan = planCampaign(
      spec,
      ["n1", "n2"].map((nodeId) => ({
        id: nodeId,
        labels: {},
        pool: "",
        enabled: true,
        everConnected: true,
        capabilities: ["upgrade.v1"],
        agentVersion: "1.0.0",
      })),
    );
    const { campaign, nodes } = createCampaign({
      id,
      spec,
      plan,
      target: { version: "2.0.0", sequence: 2 },
      now: T0,
    });
    await inTransaction(db.pool, (c) =>
      sqlTransaction(c).insertCampaign({
        campaign,
        nodes,
        createdBy: "t",
        createdByIp: "",
        now: new Date(T0),
      }),
    );
  };

  it("records the engine features a campaign uses with it, and reads them back", async () => {
    await insert("features-budget", 2);
    await insert("features-plain");
    const { rows } = await db.pool.query<{ id: string; engine_features: string[] }>(
      "select id, engine_features from campaigns where id like 'features-%' order by id",
    );
    expect(rows).toEqual([
      {
        id: "features-budget",
        engine_features: ["deferral", "download_budget", "lost_after_upgrade", "report_seq"],
      },
      { id: "features-plain", engine_features: ["deferral", "lost_after_upgrade", "report_seq"] },
    ]);
    const row = await sqlTransaction(db.pool).readCampaign("features-budget");
    expect(row?.features).toEqual([
      "deferral",
      "download_budget",
      "lost_after_upgrade",
      "report_seq",
    ]);
  });

  it("keeps the fields it does not know when a decision rewrites a node and its campaign", async () => {
    await insert("merge");
    // A newer release wrote fields of its own, and a field this one knows.
    await db.pool.query(
      `update campaign_nodes set record = record || '{"futureField": {"x": 1}, "deferredAt": 5}'
        where campaign_id = 'merge' and node_id = 'n1'`,
    );
    await db.pool.query(
      `update campaigns set state = state || '{"futureTop": "kept"}' where id = 'merge'`,
    );
    await inTransaction(db.pool, async (c) => {
      const tx = sqlTransaction(c);
      const row = await tx.readCampaign("merge", true);
      const nodes = await tx.readNodes("merge");
      const n1 = nodes.find((n) => n.nodeId === "n1");
      if (!row || !n1) throw new Error("not inserted");
      expect(n1.deferredAt).toBe(5);
      expect("futureField" in n1).toBe(false);
      await tx.writeDecision({
        campaignId: "merge",
        version: row.version,
        campaign: { ...row.campaign, phase: "paused", pausedAt: T0 + 1 },
        nodes: [{ ...n1, state: "offered", deferredAt: undefined, stateChangedAt: T0 + 1 }],
        operations: [],
        appliedCommands: [],
        audits: [],
        now: new Date(T0 + 1),
      });
    });
    const node = (
      await db.pool.query<{ record: Record<string, unknown> }>(
        "select record from campaign_nodes where campaign_id = 'merge' and node_id = 'n1'",
      )
    ).rows[0]?.record;
    expect(node?.futureField).toEqual({ x: 1 });
    expect(node?.state).toBe("offered");
    expect(node && "deferredAt" in node).toBe(false);
    const state = (
      await db.pool.query<{ state: Record<string, unknown>; phase: string }>(
        "select state, phase from campaigns where id = 'merge'",
      )
    ).rows[0];
    expect(state?.state.futureTop).toBe("kept");
    expect(state?.state.phase).toBe("paused");
    expect(state?.phase).toBe("paused");
  });
});
