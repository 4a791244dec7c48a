import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedCampaign } from "../../agent-sim/bench/campaign-tick.js";
import { sqlTransaction } from "../../control/campaign-store/index.js";
import { REFRESH_MS, WorkingCopies } from "../../control/campaign-worker/working-copy.js";
import { type Database, openDatabase } from "../../control/db/database.js";
import { createLogger } from "../../control/log.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";

const T0 = 1_000_000;

describe("the campaign worker's working copy", () => {
  let testDb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase("working_copy");
    db = await openDatabase({ url: testDb.url, log: createLogger({ level: "silent" }) });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const versionOf = async (id: string) =>
    (await db.pool.query<{ version: number }>("select version from campaigns where id = $1", [id]))
      .rows[0]?.version ?? -1;
  const reportOn = (id: string, nodeId: string, phase: string) =>
    db.pool.query(
      `update campaign_operations set report_phase = $3, report_at = now(), acked_at = now()
        where campaign_id = $1 and node_id = $2`,
      [id, nodeId, phase],
    );

  it("re-reads only the facts of nodes marked stale, and reloads at another row version", async () => {
    const flying = await seedCampaign(db.pool, "wc1", 50, 10);
    const [first, second] = flying as [string, string];
    const copies = new WorkingCopies();
    const v = await versionOf("wc1");
    const loaded = await copies.current(sqlTransaction(db.pool), "wc1", v, T0);
    expect(loaded.nodes).toHaveLength(50);
    expect(loaded.stored.size).toBe(0);

    await reportOn("wc1", first, "APPLYING");
    await reportOn("wc1", second, "APPLYING");
    copies.markStale("wc1", first);
    const refreshed = await copies.current(sqlTransaction(db.pool), "wc1", v, T0 + 1);
    expect(refreshed.stored.get(first)?.reports.map((r) => r.phase)).toEqual(["APPLYING"]);
    // Not marked, not yet due for the periodic refresh: the copy does not know it yet.
    expect(refreshed.stored.get(second)).toBeUndefined();

    await db.pool.query(
      `update campaign_nodes set record = record || '{"message":"changed elsewhere"}'
        where campaign_id = 'wc1' and node_id = $1`,
      [first],
    );
    await db.pool.query("update campaigns set version = version + 1 where id = 'wc1'");
    const reloaded = await copies.current(sqlTransaction(db.pool), "wc1", v + 1, T0 + 2);
    expect(reloaded.nodes.find((n) => n.nodeId === first)?.message).toBe("changed elsewhere");
    expect(reloaded.stored.get(second)?.reports.map((r) => r.phase)).toEqual(["APPLYING"]);
  });

  it("re-reads the active nodes' facts and registry rows every REFRESH_MS (facts another Control wrote)", async () => {
    const flying = await seedCampaign(db.pool, "wc2", 30, 5);
    const node = flying[0] as string;
    const copies = new WorkingCopies();
    const v = await versionOf("wc2");
    await copies.current(sqlTransaction(db.pool), "wc2", v, T0);
    await reportOn("wc2", node, "RESTARTING");
    await db.pool.query("update nodes set agent_version = '2.0.0', boot_id = 'b1' where id = $1", [
      node,
    ]);
    const early = await copies.current(sqlTransaction(db.pool), "wc2", v, T0 + REFRESH_MS - 1);
    expect(early.stored.get(node)).toBeUndefined();
    expect(early.registry.get(node)?.boot_id).toBe("b0");
    const later = await copies.current(sqlTransaction(db.pool), "wc2", v, T0 + REFRESH_MS);
    expect(later.stored.get(node)?.reports.map((r) => r.phase)).toEqual(["RESTARTING"]);
    expect(later.registry.get(node)).toMatchObject({ agent_version: "2.0.0", boot_id: "b1" });
  });

  it("re-reads every REFRESH_MS the registry rows of the waiting nodes it holds offline (back on another Control, its announcement lost)", async () => {
    await seedCampaign(db.pool, "wc4", 30, 5);
    const copies = new WorkingCopies();
    const v = await versionOf("wc4");
    const first = await copies.current(sqlTransaction(db.pool), "wc4", v, T0);
    const waiting = first.nodes.find((n) => n.state === "waiting")?.nodeId as string;
    await db.pool.query("update nodes set online = false where id = $1", [waiting]);
    // Loaded again (a takeover) while the node is away…
    await db.pool.query("update campaigns set version = version + 1 where id = 'wc4'");
    const loaded = await copies.current(sqlTransaction(db.pool), "wc4", v + 1, T0);
    expect(loaded.registry.get(waiting)?.online).toBe(false);
    // …then back on another Control, which announces nothing here.
    await db.pool.query("update nodes set online = true, boot_id = 'b9' where id = $1", [waiting]);
    const early = await copies.current(sqlTransaction(db.pool), "wc4", v + 1, T0 + REFRESH_MS - 1);
    expect(early.registry.get(waiting)?.online).toBe(false);
    const later = await copies.current(sqlTransaction(db.pool), "wc4", v + 1, T0 + REFRESH_MS);
    expect(later.registry.get(waiting)).toMatchObject({ online: true, boot_id: "b9" });
  });

  it("keeps Hellos pending until a decision looked at the waiting nodes, and takes Hellos into the registry", async () => {
    const flying = await seedCampaign(db.pool, "wc3", 30, 5);
    const copies = new WorkingCopies();
    const v = await versionOf("wc3");
    const loaded = await copies.current(sqlTransaction(db.pool), "wc3", v, T0);
    expect(loaded.helloSince).toBeUndefined(); // fresh: every waiting node is looked at
    const waiting = loaded.nodes.find((n) => n.state === "waiting")?.nodeId as string;
    const hello = {
      nodeId: waiting,
      sessionId: "s",
      bootId: "b9",
      agentVersion: "2.0.0",
      previousVersion: "1.0.0",
      platform: "linux-amd64",
      pool: "",
      labels: {},
      capabilities: ["upgrade.v1"],
      confirmedSequence: 0,
      connectedAt: new Date(),
    };
    copies.noteHello(hello);
    // A decision that did not look at the waiting nodes (a breached batch) keeps them pending.
    copies.commit("wc3", v, [], undefined, false);
    expect(
      (await copies.current(sqlTransaction(db.pool), "wc3", v, T0)).helloSince,
    ).toBeUndefined();
    copies.commit("wc3", v, [], undefined, true);
    const after = await copies.current(sqlTransaction(db.pool), "wc3", v, T0);
    expect([...(after.helloSince ?? [])]).toEqual([waiting]);
    expect(after.registry.get(waiting)).toMatchObject({ boot_id: "b9", agent_version: "2.0.0" });
    copies.commit("wc3", v, [], after.helloSince, true);
    expect((await copies.current(sqlTransaction(db.pool), "wc3", v, T0)).helloSince?.size).toBe(0);
    expect(flying).toHaveLength(5);
  });
});
