/**
 * Active-active Controls: three Control processes (`node --import tsx control/main.ts`, as
 * `npx tsx` runs it) on one PostgreSQL, behind a round-robin TCP load balancer written here,
 * with simulated agents spread over all three. Exactly one Control leads the campaign worker;
 * every operation reaches the Control holding its node's stream through PostgreSQL.
 *
 * - a campaign completes with every node succeeded, and each Control held some of its nodes;
 * - the leader is SIGKILLed mid-campaign and started again: the campaign completes the same;
 * - a Control that does not lead is SIGKILLed mid-campaign and started again: the same.
 * In each, no agent applies an operation twice (the simulated agents count applications).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
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
import { roundRobin } from "../helpers/round-robin.js";
import { isDone, NEW, quickSpec } from "./campaign-fixture.js";

const TOKEN = "active-active-operator-token-0123456789";
const AGENTS_PER_GROUP = 24;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One Control process: its ports, its data directory, and the child while it runs. */
interface ControlProcess {
  agentPort: number;
  adminUrl: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess | undefined;
  stderr: string;
}

describe("three active-active Controls behind a load balancer", () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let dir: string;
  let artifacts: { server: Server; base: string };
  let balancer: { port: number; close(): Promise<void> };
  let configFile: string;
  const controls: ControlProcess[] = [];
  const fleets = new Map<string, Fleet>();

  /**
   * Starts `c`; with `newPortsOnClash`, a start that loses one of its ports to another process
   * (`freePort` closes the port it found, and the Control binds it seconds later) is tried again
   * on fresh ports, up to three times. Restarts keep their ports: the balancer knows them.
   */
  const start = async (c: ControlProcess, newPortsOnClash = false) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnce(c);
      } catch (e) {
        if (!newPortsOnClash || attempt >= 3 || !c.stderr.includes("EADDRINUSE")) throw e;
        await assignPorts(c);
      }
    }
  };

  const assignPorts = async (c: ControlProcess) => {
    const [agentPort, adminPort] = [await freePort(), await freePort()];
    c.agentPort = agentPort;
    c.adminUrl = `http://127.0.0.1:${adminPort}`;
    c.env = {
      ...c.env,
      AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${agentPort}`,
      AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
    };
  };

  const startOnce = async (c: ControlProcess) => {
    c.stderr = "";
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "control/main.ts", "--config", configFile],
      { cwd: process.cwd(), env: c.env, stdio: ["ignore", "ignore", "pipe"] },
    );
    proc.stderr?.on("data", (chunk: Buffer) => {
      c.stderr = (c.stderr + chunk.toString()).slice(-4000);
    });
    c.child = proc;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`Control exited at start:\n${c.stderr}`);
      const ok = await fetch(`${c.adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`Control not ready in 60 s:\n${c.stderr}`);
      await sleep(100);
    }
  };

  const kill = async (c: ControlProcess) => {
    const proc = c.child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
    c.child = undefined;
  };

  const client = <S extends Parameters<typeof createClient>[0]>(service: S, c?: ControlProcess) => {
    const target = c ?? controls.find((x) => x.child !== undefined);
    if (!target) throw new Error("no Control runs");
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${TOKEN}`);
      return next(req);
    };
    return createClient(
      service,
      createConnectTransport({
        baseUrl: target.adminUrl,
        httpVersion: "1.1",
        interceptors: [bearer],
      }),
    );
  };

  /** The Control whose instance id is `id` (it names the process id). */
  const byInstance = (id: string) =>
    controls.find((c) => c.child?.pid !== undefined && id.includes(`-${c.child.pid}-`));

  const leader = async (): Promise<ControlProcess> => {
    for (let i = 0; i < 100; i++) {
      const { rows } = await sql.query<{ holder: string }>(
        "select holder from control_leases where name = 'campaign-worker' and expires_at > now()",
      );
      const found = rows[0] && byInstance(rows[0].holder);
      if (found) return found;
      await sleep(100);
    }
    throw new Error("no Control leads");
  };

  /** Online nodes of `group` per holding Control (instance id). */
  const holders = async (group: string): Promise<Map<string, number>> => {
    const { nodes } = await client(NodeService).listNodes({ labels: { group }, pageSize: 1000 });
    const out = new Map<string, number>();
    for (const n of nodes) if (n.online) out.set(n.heldBy, (out.get(n.heldBy) ?? 0) + 1);
    return out;
  };

  const get = async (id: string): Promise<Campaign | undefined> =>
    (await client(CampaignService).getCampaign({ id, summaryOnly: true })).campaign;

  const waitDone = async (id: string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await get(id).catch(() => undefined);
      if (isDone(c)) return;
      if (Date.now() > deadline) {
        const logs = controls.map((x, i) => `control ${i}:\n${x.stderr}`).join("\n");
        throw new Error(`campaign did not finish: ${JSON.stringify(c?.counts)}\n${logs}`);
      }
      await sleep(200);
    }
  };

  const startCampaign = async (group: string, concurrency: number) => {
    const { campaign } = await client(CampaignService).startCampaign({
      spec: quickSpec(NEW, [5, 50, 100], {
        selector: { labels: { group } },
        concurrency,
        disruptionBudgetPercent: 100,
      }),
    });
    return campaign?.id ?? "";
  };

  /** Every node of the campaign succeeded, every agent runs NEW, none applied an operation twice. */
  const expectAllSucceeded = async (id: string, group: string) => {
    const done = await client(CampaignService).getCampaign({ id });
    expect(done.campaign?.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.nodes).toHaveLength(AGENTS_PER_GROUP);
    const states = done.nodes.map((n) => `${NodeState[n.state]}/${n.code}`);
    expect(new Set(states)).toEqual(new Set(["SUCCEEDED/"]));
    const fleet = fleets.get(group) as Fleet;
    for (const agent of fleet.agents) expect(agent.version).toBe(NEW);
    expect(fleet.stats().duplicateApplications).toBe(0);
  };

  /** Waits until `n` nodes of the campaign are past waiting (offered or further). */
  const waitStarted = async (id: string, n: number) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const c = await get(id);
      const waiting =
        c === undefined
          ? AGENTS_PER_GROUP
          : c.counts.filter((x) => x.state === NodeState.WAITING).reduce((n, x) => n + x.count, 0);
      if (AGENTS_PER_GROUP - waiting >= n) return;
      if (Date.now() > deadline) throw new Error(`campaign ${id} did not start offering`);
      await sleep(100);
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase("active_active");
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    dir = await mkdtemp(join(tmpdir(), "agent-control-active-"));
    artifacts = await artifactServer();
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    configFile = join(dir, "control.json");
    await writeFile(
      configFile,
      JSON.stringify({
        release: { pins: [key.pin] },
        policy: { minBatchDurationSeconds: 0 },
        timeouts: {
          reconnectSeconds: 60,
          configGraceSeconds: 0,
          heartbeatSeconds: 1,
          offlineAfterSeconds: 10,
        },
        worker: { intervalMs: 200 },
        limits: { shutdownGraceSeconds: 1 },
        // The simulated fleet reports the label its campaigns select on.
        enrollment: { agentReportedLabels: ["group"] },
      }),
    );
    for (let i = 0; i < 3; i++) {
      const [agentPort, adminPort] = [await freePort(), await freePort()];
      controls.push({
        agentPort,
        adminUrl: `http://127.0.0.1:${adminPort}`,
        child: undefined,
        stderr: "",
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          AGENT_CONTROL_ADMIN_TOKEN: TOKEN,
          AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${agentPort}`,
          AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
          AGENT_CONTROL_DATA_DIR: join(dir, `control-${i}`),
          AGENT_CONTROL_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
        },
      });
    }
    // The first applies the migrations; the others start together.
    await start(controls[0] as ControlProcess, true);
    await Promise.all(controls.slice(1).map((c) => start(c, true)));
    balancer = await roundRobin(controls.map((c) => c.agentPort));
    const release = await makeRelease({
      version: NEW,
      sequence: 20,
      keys: [key],
      platforms: ["linux-amd64"],
      urlBase: artifacts.base,
    });
    await client(ReleaseService).registerRelease({ envelope: release.envelope });
    const joinToken = (await client(NodeService).createJoinToken({})).secret;
    for (const group of ["a", "b", "c"]) {
      const fleet = await startFleet({
        server: `127.0.0.1:${balancer.port}`,
        pins: [key.pin],
        joinToken,
        count: AGENTS_PER_GROUP,
        idPrefix: group,
        labels: { group },
        restartMs: [150, 400],
        backoff: { baseMs: 100, capMs: 800, resetAfterMs: 1000 },
      });
      fleets.set(group, fleet);
      await fleet.waitUntil(
        (f) => f.welcomedCount() === AGENTS_PER_GROUP,
        30_000,
        `fleet ${group} welcomed`,
      );
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...fleets.values()].map((f) => f.stop()));
    await Promise.all(controls.map(kill));
    await balancer?.close();
    await new Promise((resolve) => artifacts?.server.close(resolve));
    await sql?.end();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("spreads the agents over all three Controls, and a campaign completes with every node succeeded", async () => {
    const held = await holders("a");
    const live = controls.map((c) => c.child?.pid);
    expect(held.size).toBe(3);
    for (const [instance, count] of held) {
      expect(live.some((pid) => instance.includes(`-${pid}-`))).toBe(true);
      expect(count).toBeGreaterThan(0);
    }
    expect(Object.keys(await leader())).toContain("adminUrl");
    const id = await startCampaign("a", 0);
    await waitDone(id);
    await expectAllSucceeded(id, "a");
  }, 120_000);

  it("completes the same when the leader is SIGKILLed mid-campaign and started again", async () => {
    const id = await startCampaign("b", 3);
    await waitStarted(id, 6);
    const killed = await leader();
    expect(isDone(await get(id))).toBe(false);
    await kill(killed);
    const next = await leader();
    expect(next).not.toBe(killed);
    await start(killed);
    await waitDone(id);
    await expectAllSucceeded(id, "b");
  }, 120_000);

  it("completes the same when a Control that does not lead is SIGKILLed mid-campaign and started again", async () => {
    const id = await startCampaign("c", 3);
    await waitStarted(id, 6);
    const lead = await leader();
    const held = await holders("c");
    const killed = controls.find(
      (c) => c !== lead && [...held.keys()].some((i) => i.includes(`-${c.child?.pid}-`)),
    ) as ControlProcess;
    expect(killed).toBeDefined();
    expect(isDone(await get(id))).toBe(false);
    await kill(killed);
    await start(killed);
    expect(await leader()).toBe(lead);
    await waitDone(id);
    await expectAllSucceeded(id, "c");
  }, 120_000);
});
