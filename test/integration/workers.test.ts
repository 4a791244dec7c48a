/**
 * `npm start -- --workers 3` as a real process (`node --import tsx control/main.ts`): the
 * primary starts the embedded PostgreSQL and three Control workers that share the agent and
 * admin ports; agents land on all; a worker SIGKILLed is replaced by a new one, which takes
 * agents too; a campaign over the fleet completes with every node succeeded and no operation
 * applied twice, also when the leading worker, and in another campaign a worker that does
 * not lead, is SIGKILLed mid-campaign; SIGTERM stops the workers and then the database, and
 * the primary exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import {
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { freePort } from "../helpers/process-fixtures.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";
import { NEW, NEWER, quickSpec, waitForCampaign } from "./campaign-fixture.js";

const TOKEN = "workers-test-operator-token-0123456789";
const AGENTS = 16;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const WORKERS = 3;

describe(`npm start -- --workers ${WORKERS}`, () => {
  let dir: string;
  let artifacts: Server;
  let primary: ChildProcess;
  let stdout = "";
  let stderr = "";
  let adminUrl: string;
  let fleet: Fleet | undefined;

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
  const until = async (what: string, ms: number, done: () => boolean | Promise<boolean>) => {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}\n${stdout}\n${stderr}`);
      await sleep(100);
    }
  };
  /** Worker pids the primary reported started, in order. */
  const started = () => [...stdout.matchAll(/worker (\d+) started/g)].map((m) => Number(m[1]));
  /** The pid of the worker that last logged taking the campaign lease. */
  const leaderPid = () =>
    Number([...stdout.matchAll(/"pid":(\d+)[^\n]*"msg":"leadership acquired"/g)].at(-1)?.[1]);
  /** Worker pids still running. */
  const alive = () =>
    started().filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
  /** The pids of the Controls holding the online nodes (instance ids name their pid). */
  const holderPids = async () => {
    const { nodes } = await client(NodeService).listNodes({ pageSize: 1000 });
    return new Set(
      nodes.filter((n) => n.online).map((n) => Number(/-(\d+)-[0-9a-f]+$/.exec(n.heldBy)?.[1])),
    );
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-workers-"));
    artifacts = createServer((req, res) => {
      const [, version, platform] = (req.url ?? "").split("/");
      res.end(`agent ${version} for ${platform}\n`);
    });
    await new Promise<void>((resolve) => artifacts.listen(0, "127.0.0.1", resolve));
    const artifactPort = (artifacts.address() as { port: number }).port;
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    const configFile = join(dir, "control.json");
    await writeFile(
      configFile,
      JSON.stringify({
        release: { pins: [key.pin] },
        policy: { minBatchDurationSeconds: 0 },
        timeouts: { reconnectSeconds: 60, configGraceSeconds: 0, heartbeatSeconds: 1 },
        worker: { intervalMs: 200 },
        limits: { shutdownGraceSeconds: 1 },
      }),
    );
    const [agentPort, adminPort] = [await freePort(), await freePort()];
    adminUrl = `http://127.0.0.1:${adminPort}`;
    const { DATABASE_URL: _external, ...env } = process.env;
    primary = spawn(
      process.execPath,
      ["--import", "tsx", "control/main.ts", "--config", configFile, "--workers", `${WORKERS}`],
      {
        cwd: process.cwd(),
        env: {
          ...env,
          AGENT_CONTROL_ADMIN_TOKEN: TOKEN,
          AGENT_CONTROL_AGENT_ADDR: `127.0.0.1:${agentPort}`,
          AGENT_CONTROL_ADMIN_ADDR: `127.0.0.1:${adminPort}`,
          AGENT_CONTROL_DATA_DIR: dir,
          // info: the test reads which worker took the campaign lease.
          AGENT_CONTROL_LOG_LEVEL: "info",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    primary.stdout?.on("data", (chunk: Buffer) => {
      // Only the lines the test reads: agents' info lines would grow this without bound.
      for (const line of chunk.toString().split("\n")) {
        if (/started|is serving|leadership|exited/.test(line)) stdout += `${line}\n`;
      }
    });
    primary.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    await until(`${WORKERS} workers ready`, 120_000, async () => {
      if (primary.exitCode !== null) throw new Error(`primary exited:\n${stdout}\n${stderr}`);
      return (stdout.match(/is serving agents/g) ?? []).length >= WORKERS;
    });
    const release = await makeRelease({
      version: NEW,
      sequence: 20,
      keys: [key],
      platforms: ["linux-amd64"],
      urlBase: `http://127.0.0.1:${artifactPort}`,
    });
    await client(ReleaseService).registerRelease({ envelope: release.envelope });
    const newer = await makeRelease({
      version: NEWER,
      sequence: 30,
      keys: [key],
      platforms: ["linux-amd64"],
      urlBase: `http://127.0.0.1:${artifactPort}`,
    });
    await client(ReleaseService).registerRelease({ envelope: newer.envelope });
    fleet = await startFleet({
      server: `127.0.0.1:${agentPort}`,
      pins: [key.pin],
      joinToken: (await client(NodeService).createJoinToken({})).secret,
      count: AGENTS,
      restartMs: [150, 400],
      backoff: { baseMs: 100, capMs: 800, resetAfterMs: 1000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === AGENTS, 30_000, "fleet welcomed");
  }, 180_000);

  afterAll(async () => {
    await fleet?.stop();
    if (primary && primary.exitCode === null) primary.kill("SIGKILL");
    await new Promise((resolve) => artifacts?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a bad --workers value with exit 2 and one line, starting nothing", async () => {
    const { DATABASE_URL: _external, ...env } = process.env;
    const bad = spawn(process.execPath, ["--import", "tsx", "control/main.ts", "--workers", "0"], {
      cwd: process.cwd(),
      env: { ...env, AGENT_CONTROL_DATA_DIR: join(dir, "never") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    bad.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => bad.once("exit", resolve));
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toEqual([
      'control: --workers must be a whole number from 1 to 64, not "0" (see --help)',
    ]);
    expect(existsSync(join(dir, "never"))).toBe(false);
  });

  /** Runs `call` again (up to 5 times) when a worker's death reset its connection. */
  const retryingReset = async <T>(call: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const reset = error instanceof ConnectError && /ECONNRESET|EPIPE/.test(error.message);
        if (!reset || attempt >= 5) throw error;
        await sleep(200);
      }
    }
  };

  /**
   * Runs a campaign to `version` over the fleet and SIGKILLs the worker `victim` picks once
   * the first batch has nodes past pending; the campaign must complete with every node
   * succeeded and no operation applied twice, and a replacement worker must start.
   */
  const campaignSurvivingKill = async (version: string, victim: () => number) => {
    const campaigns = client(CampaignService);
    const before = started().length;
    const { campaign } = await campaigns.startCampaign({
      spec: quickSpec(version, [5, 50, 100], { disruptionBudgetPercent: 100 }),
    });
    const id = campaign?.id ?? "";
    await waitForCampaign(campaigns, id, (c) =>
      c.counts.some((n) => n.state !== NodeState.WAITING && n.count > 0),
    );
    const killed = victim();
    process.kill(killed, "SIGKILL");
    // A request that was on the killed worker's connection is reset: ask again.
    const done = await retryingReset(() => waitForCampaign(campaigns, id, undefined, 120_000));
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    const { nodes } = await retryingReset(() => campaigns.getCampaign({ id }));
    expect(nodes.filter((n) => n.state === NodeState.SUCCEEDED)).toHaveLength(AGENTS);
    for (const agent of fleet?.agents ?? []) expect(agent.version).toBe(version);
    expect(fleet?.stats().duplicateApplications).toBe(0);
    await until("a replacement worker", 30_000, () => started().length > before);
    return killed;
  };

  it("spreads agents over every worker, replaces a worker that dies, completes campaigns through the SIGKILL of the leading worker and of another, and stops cleanly", async () => {
    const [first] = started();
    expect(await holderPids()).toEqual(new Set(started()));

    // A worker dies: the primary starts another, and agents reach it.
    process.kill(first as number, "SIGKILL");
    await until("a replacement worker", 30_000, () => started().length > WORKERS);
    const replacement = started()[WORKERS] as number;
    await until("the replacement serving", 60_000, () => {
      return (stdout.match(/is serving agents/g) ?? []).length > WORKERS;
    });
    await until("agents on the replacement", 60_000, async () => {
      if ((await holderPids()).has(replacement)) return true;
      fleet?.dropAllStreams();
      await fleet?.waitUntil((f) => f.welcomedCount() === AGENTS, 30_000, "fleet back");
      return false;
    });

    // The leading worker dies mid-campaign: another takes the lease and finishes it.
    await until("a leader among the live workers", 60_000, () => alive().includes(leaderPid()));
    const leader = leaderPid();
    await campaignSurvivingKill(NEW, () => leader);
    // A worker that does not lead dies mid-campaign: its agents move, the campaign goes on.
    await until("a leader after the kill", 60_000, () => alive().includes(leaderPid()));
    const bystander = await campaignSurvivingKill(NEWER, () => {
      const pid = alive().find((p) => p !== leaderPid());
      if (pid === undefined) throw new Error("no worker besides the leader");
      return pid;
    });
    expect(bystander).not.toBe(leaderPid());

    // SIGTERM: the workers drain, the database stops, the primary exits 0.
    await fleet?.stop();
    fleet = undefined;
    const exited = new Promise<number | null>((resolve) => primary.once("exit", resolve));
    primary.kill("SIGTERM");
    expect(await exited).toBe(0);
    for (const pid of started()) expect(() => process.kill(pid, 0)).toThrow();
    expect(existsSync(join(dir, "postgres", "postmaster.pid"))).toBe(false);
  }, 420_000);
});
