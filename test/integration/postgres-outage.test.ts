import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import { startFleet } from "../../agent-sim/index.js";
import {
  type EmbeddedDatabase,
  freePort,
  startEmbeddedPostgres,
} from "../../control/db/embedded-postgres.js";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import {
  CampaignPhase,
  CampaignService,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually } from "../helpers/raw-agent.js";
import { makeKeys, registerTestRelease } from "../helpers/releases.js";
import { fastConfig, waitForCampaign } from "./campaign-fixture.js";

/** How long PostgreSQL stays away (the 20 s by default). */
const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 20) * 1000;
const COUNT = 60;

describe("PostgreSQL stopped during a batch", () => {
  let dataDir: string;
  let port: number;
  let pg: EmbeddedDatabase;
  let tc: TestControl;
  let key: ReleaseKeyPair;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "agent-control-outage-"));
    port = await freePort();
    pg = await startEmbeddedPostgres({ dataDir, database: "outage", port });
    [key] = (await makeKeys(1)) as [ReleaseKeyPair];
    tc = await startTestControl({
      database: { url: pg.url, name: "outage", drop: async () => {} },
      config: fastConfig(key.pin, {
        timeouts: {
          reconnectSeconds: 60,
          configGraceSeconds: 0,
          heartbeatSeconds: 1,
          offlineAfterSeconds: 5,
        },
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
    await pg?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("reports not-ready, sends no new offers, keeps the streams, and finishes the campaign once it is back", async () => {
    await registerTestRelease(tc, { version: "2.0.0", sequence: 20, key });
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: await tc.joinToken(),
      count: COUNT,
      seed: 3,
      version: "1.0.0",
      pins: [key.pin],
      restartMs: [100, 400],
      backoff: { baseMs: 100, capMs: 1000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 30_000, "fleet welcomed");

    const campaigns = tc.client(CampaignService);
    const seconds = (s: number) => ({ seconds: BigInt(s), nanos: 0 });
    const { campaign } = await campaigns.startCampaign({
      spec: {
        targetVersion: "2.0.0",
        batches: [
          { percent: 5, minDuration: seconds(1) },
          { percent: 50, minDuration: seconds(3) },
          { percent: 100, minDuration: seconds(1) },
        ],
        disruptionBudgetPercent: 100,
      },
    });
    const id = campaign?.id ?? "";
    await waitForCampaign(campaigns, id, (c) => c.currentBatch >= 1);

    // Watch what Control sends while the database is away.
    const hub = tc.control.hub;
    const send = hub.send.bind(hub);
    const sentBefore = new Set<string>();
    const newDuringOutage: string[] = [];
    let outage = false;
    hub.send = (nodeId, operation) => {
      if (outage && !sentBefore.has(operation.id)) newDuringOutage.push(operation.id);
      if (!outage) sentBefore.add(operation.id);
      return send(nodeId, operation);
    };

    const streamsBefore = hub.size;
    outage = true;
    await pg.stop();
    await eventually(
      async () => (await fetch(`${tc.adminUrl}/readyz`)).status === 503,
      5000,
      "readyz 503",
    );
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    expect((await fetch(`${tc.adminUrl}/readyz`)).status).toBe(503);
    expect(newDuringOutage).toEqual([]);
    // Streams stay open; only agents that were restarting meanwhile cannot finish a handshake.
    expect(hub.size).toBeGreaterThanOrEqual(streamsBefore - COUNT / 2);

    pg = await startEmbeddedPostgres({ dataDir, database: "outage", port });
    outage = false;
    await eventually(
      async () => (await fetch(`${tc.adminUrl}/readyz`)).status === 200,
      15_000,
      "ready again",
    );
    const done = await waitForCampaign(campaigns, id, undefined, 60_000);
    const failed = (await campaigns.getCampaign({ id })).nodes.filter(
      (n) => n.code && n.state !== 6,
    );
    expect(failed.map((n) => `${n.nodeId}: ${n.code} ${n.message}`)).toEqual([]);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    await fleet.waitUntil((f) => f.stats().versions["2.0.0"] === COUNT, 30_000, "all on 2.0.0");
    expect(fleet.stats().duplicateApplications).toBe(0);
  }, 180_000);
});
