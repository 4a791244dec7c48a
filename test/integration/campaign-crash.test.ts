/**
 * Crash safety: Control runs as a real child process (`node --import tsx control/main.ts`,
 * as `npx tsx` does) on a real PostgreSQL; it is SIGKILLed at random points of two running
 * campaigns and started again each time. Both campaigns must end exactly as they do without
 * kills, and no simulated agent may apply an operation twice.
 *
 * The outcome without kills is deterministic by construction:
 * - campaign A (200 agents, 3 of them refuse, all in the 140-node last batch, threshold 5 %)
 *   completes with exactly those 3 failed (`rejected`) and the other 197 succeeded;
 * - campaign B (100 agents that fail to apply the release) breaches its 5-node canary batch,
 *   rolls it back and ends `rolled_back`/`batch_failed`; no node outside that batch is touched.
 *
 * CAMPAIGN_CRASH_KILLS sets the number of kills (default 20, the full mode, ~3 minutes on
 * two cores; CI runs 5, ~80 s). Each restart costs ~3 s of TypeScript loading plus the agents'
 * reconnection, so the campaigns are paced (concurrency) to still be running at the last kill.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
  BatchState,
  type Campaign,
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { artifactServer, freePort } from "../helpers/process-fixtures.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";
import { isDone, NEW, OLD, quickSpec } from "./campaign-fixture.js";

const KILLS = Number(process.env.CAMPAIGN_CRASH_KILLS ?? 20);
const TOKEN = "crash-test-operator-token-0123456789";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Control killed with SIGKILL during running campaigns", () => {
  let db: TestDatabase;
  let dir: string;
  let artifacts: { server: Server; base: string };
  let child: ChildProcess | undefined;
  let stderr = "";
  const fleets: Fleet[] = [];
  let env: NodeJS.ProcessEnv;
  let adminUrl: string;
  let agentAddress: string;
  let configFile: string;

  const client = <S extends Parameters<typeof createClient>[0]>(service: S) => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${TOKEN}`);
      return next(req);
    };
    return createClient(
      service,
      createConnectTransport({ baseUrl: adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
    );
  };

  const startControl = async () => {
    stderr = "";
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "control/main.ts", "--config", configFile],
      {
        cwd: process.cwd(),
        env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child = proc;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`Control exited at start:\n${stderr}`);
      const ok = await fetch(`${adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`Control not ready in 30 s:\n${stderr}`);
      await sleep(50);
    }
  };

  const kill = async () => {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
    child = undefined;
  };

  beforeAll(async () => {
    db = await createTestDatabase("crash");
    dir = await mkdtemp(join(tmpdir(), "agent-control-crash-"));
    artifacts = await artifactServer();
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    const [agentPort, adminPort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    agentAddress = `127.0.0.1:${agentPort}`;
    configFile = join(dir, "control.json");
    await writeFile(
      configFile,
      JSON.stringify({
        release: { pins: [key.pin] },
        policy: { minBatchDurationSeconds: 0 },
        timeouts: {
          reconnectSeconds: 120,
          configGraceSeconds: 0,
          heartbeatSeconds: 1,
          offlineAfterSeconds: 10,
        },
        worker: { intervalMs: 200 },
        limits: { shutdownGraceSeconds: 1 },
      }),
    );
    env = {
      ...process.env,
      DATABASE_URL: db.url,
      AGENT_CONTROL_ADMIN_TOKEN: TOKEN,
      AGENT_CONTROL_AGENT_ADDR: agentAddress,
      AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
      AGENT_CONTROL_DATA_DIR: dir,
      AGENT_CONTROL_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    };
    await startControl();
    const release = await makeRelease({
      version: NEW,
      sequence: 20,
      keys: [key],
      platforms: ["linux-amd64"],
      urlBase: artifacts.base,
    });
    await client(ReleaseService).registerRelease({ envelope: release.envelope });
    const common = {
      server: agentAddress,
      pins: [key.pin],
      restartMs: [150, 400] as const,
      backoff: { baseMs: 100, capMs: 800, resetAfterMs: 1000 },
    };
    for (const [prefix, count, failVersions] of [
      ["a", 200, []],
      ["b", 100, [NEW]],
    ] as const) {
      const joinToken = (await client(NodeService).createJoinToken({})).secret;
      const fleet = await startFleet({
        ...common,
        joinToken,
        count,
        idPrefix: prefix,
        labels: { group: prefix },
        failVersions,
      });
      await fleet.waitUntil((f) => f.welcomedCount() === count, 30_000, `fleet ${prefix} welcomed`);
      fleets.push(fleet);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    await kill();
    await new Promise((resolve) => artifacts?.server.close(resolve));
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it(`ends every campaign as without kills after ${KILLS} SIGKILLs, applying no operation twice`, async () => {
    const [a, b] = fleets as [Fleet, Fleet];
    const campaigns: Client<typeof CampaignService> = client(CampaignService);
    const specA = quickSpec(NEW, [5, 30, 100], {
      selector: { labels: { group: "a" } },
      concurrency: KILLS >= 10 ? 3 : 6,
      disruptionBudgetPercent: 100,
    });
    const plan = await campaigns.planCampaign({ spec: specA });
    const refusers = plan.batches[2]!.nodeIds.slice(0, 3);
    for (const nodeId of refusers) a.agent(nodeId).setBehaviour({ upgrade: "refuse" });
    const idA = (await campaigns.startCampaign({ spec: specA })).campaign?.id ?? "";
    const idB =
      (
        await campaigns.startCampaign({
          spec: quickSpec(NEW, [5, 100], {
            selector: { labels: { group: "b" } },
            concurrency: 2,
            disruptionBudgetPercent: 100,
          }),
        })
      ).campaign?.id ?? "";

    const get = async (id: string): Promise<Campaign | undefined> =>
      (await campaigns.getCampaign({ id, summaryOnly: true })).campaign;
    let kills = 0;
    while (kills < KILLS) {
      await sleep(200 + Math.floor(Math.random() * 1200));
      if (isDone(await get(idA))) break;
      await kill();
      kills++;
      const t0 = Date.now();
      await startControl();
      if (process.env.CRASH_DEBUG)
        console.log(
          `restart ${kills}: ${Date.now() - t0} ms`,
          JSON.stringify((await get(idA))?.counts),
        );
    }
    expect(kills).toBe(KILLS);

    const t1 = Date.now();
    const deadline = Date.now() + 90_000;
    while (!(isDone(await get(idA)) && isDone(await get(idB)))) {
      if (Date.now() > deadline) throw new Error("campaigns did not finish after the kills");
      await sleep(200);
    }
    if (process.env.CRASH_DEBUG) console.log(`finish after kills: ${Date.now() - t1} ms`);
    const doneA = (await campaigns.getCampaign({ id: idA })) as {
      campaign: Campaign;
      nodes: { nodeId: string; state: NodeState; code: string }[];
    };
    const statesA = doneA.nodes.map((n) => `${NodeState[n.state]}/${n.code}`);
    const counts = new Map<string, number>();
    for (const s of statesA) counts.set(s, (counts.get(s) ?? 0) + 1);
    const tally = [...counts];
    expect(tally.sort()).toEqual([
      ["FAILED/rejected", 3],
      ["SUCCEEDED/", 197],
    ]);
    expect(doneA.campaign.phase).toBe(CampaignPhase.COMPLETED);
    const failed = doneA.nodes.filter((n) => n.state === NodeState.FAILED);
    expect(failed.map((n) => n.nodeId).sort()).toEqual([...refusers].sort());
    for (const n of failed) expect(n.code).toBe("rejected");
    expect(doneA.nodes.filter((n) => n.state === NodeState.SUCCEEDED)).toHaveLength(197);
    for (const agent of a.agents) {
      expect(agent.version).toBe(refusers.includes(agent.nodeId) ? OLD : NEW);
    }

    const doneB = await campaigns.getCampaign({ id: idB });
    expect(doneB.campaign?.phase).toBe(CampaignPhase.ROLLED_BACK);
    expect(doneB.campaign?.code).toBe("batch_failed");
    expect(doneB.campaign?.batches.map((x) => x.state)).toEqual([
      BatchState.ROLLED_BACK,
      BatchState.CANCELED,
    ]);
    const canaries = new Set(doneB.nodes.filter((n) => n.batch === 0).map((n) => n.nodeId));
    for (const agent of b.agents) {
      expect(agent.version).toBe(OLD);
      if (!canaries.has(agent.nodeId)) expect(Object.keys(agent.state.handled)).toEqual([]);
    }
    for (const fleet of fleets) expect(fleet.stats().duplicateApplications).toBe(0);
  }, 600_000);
});
