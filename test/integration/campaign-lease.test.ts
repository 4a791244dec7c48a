import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_FEATURES } from "../../control/campaign/index.js";
import { createLeaderLease } from "../../control/campaign-store/sql/lease.js";
import { createLogger } from "../../control/log.js";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type CampaignFixture, campaignFixture, NEW } from "./campaign-fixture.js";

describe("the campaign worker's leader lease", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let intruder: pg.Client;
  beforeAll(async () => {
    fx = await campaignFixture();
    await fx.register(NEW);
    await fx.fleet({ count: 10 });
    intruder = new pg.Client({ connectionString: fx.tc.database.url });
    await intruder.connect();
  }, 180_000);
  afterAll(async () => {
    await intruder?.end();
    await fx?.stop();
  });

  const lease = async () =>
    (
      await intruder.query<{ holder: string; epoch: string }>(
        "select holder, epoch from control_leases where name = 'campaign-worker'",
      )
    ).rows[0];
  const version = async (id: string) =>
    (await intruder.query<{ version: number }>("select version from campaigns where id = $1", [id]))
      .rows[0]?.version;

  it("is held by the running Control; a second holder cannot take it while it lives", async () => {
    const held = await lease();
    expect(held?.holder).toBe(fx.tc.control.instanceId);
    const pool = new pg.Pool({ connectionString: fx.tc.database.url, max: 1 });
    const other = createLeaderLease({
      pool,
      holder: "second",
      ttlMs: 15_000,
      log: createLogger({ level: "silent" }),
    });
    expect(await other.tick()).toBe(false);
    expect(other.epoch).toBeUndefined();
    await other.release();
    await pool.end();
  });

  it("refuses every write of a stale leader after a takeover, and applies the recorded command once it leads again", async () => {
    const hour = { seconds: 3600n, nanos: 0 };
    const started = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        batches: [
          { percent: 5, minDuration: hour },
          { percent: 100, minDuration: hour },
        ],
      },
    });
    const id = started.campaign?.id ?? "";
    const before = await lease();
    // Another process takes the lease over: it holds a live connection and bumps the epoch. It
    // records the engine features it knows at its epoch, as a Control of this release does (one
    // that records none would be taken over at once: lease-engine-features.test.ts).
    await intruder.query(
      `update control_leases set holder = 'intruder', holder_pid = pg_backend_pid(),
          epoch = epoch + 1, expires_at = now() + interval '1 hour',
          engine_features = $1::text[], features_epoch = epoch + 1
        where name = 'campaign-worker'`,
      [[...ENGINE_FEATURES]],
    );
    const fenced = await version(id);
    const answer = await fx.campaigns.pauseCampaign({ id, reason: "while fenced" });
    expect(answer.campaign?.phase).toBe(CampaignPhase.RUNNING);
    fx.tc.control.hub.closeAll(14, "force reconnects: facts change, decisions are attempted");
    await new Promise((r) => setTimeout(r, 1500));
    expect(await version(id)).toBe(fenced);
    const pending = await intruder.query(
      "select applied_at from campaign_commands where campaign_id = $1",
      [id],
    );
    expect(pending.rows).toEqual([{ applied_at: null }]);
    const audits = await fx.audit.listAuditEvents({ campaignId: id, action: "pause" });
    expect(audits.events).toEqual([]);
    expect((await lease())?.holder).toBe("intruder");

    // The intruder's lease expires: the Control takes over at a higher epoch and applies the pause.
    await intruder.query(
      "update control_leases set expires_at = now() - interval '1 second' where name = 'campaign-worker'",
    );
    const deadline = Date.now() + 10_000;
    let phase = CampaignPhase.RUNNING;
    while (phase !== CampaignPhase.PAUSED && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      phase = (await fx.campaigns.getCampaign({ id, summaryOnly: true })).campaign?.phase ?? phase;
    }
    expect(phase).toBe(CampaignPhase.PAUSED);
    const after = await lease();
    expect(after?.holder).toBe(fx.tc.control.instanceId);
    expect(Number(after?.epoch)).toBe(Number(before?.epoch) + 2);
    const applied = await fx.audit.listAuditEvents({ campaignId: id, action: "pause" });
    expect(applied.events.map((e) => e.actor)).toEqual(["admin"]);
    await fx.campaigns.abortCampaign({ id });
  });
});
