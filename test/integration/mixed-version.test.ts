/**
 * Control upgraded one process at a time: a Control of the previous release (a git worktree of
 * {@link PREVIOUS_RELEASE_COMMIT}, run with `node --import tsx control/main.ts` as `npm start`
 * does) and one of HEAD on one PostgreSQL, behind a round-robin load balancer, with simulated
 * agents spread over both. The previous release migrates the new database and leads; HEAD starts
 * beside it and migrates its own release on top, and the previous release keeps the lease; a
 * campaign started through HEAD's admin API records engine features the previous release does
 * not know, so HEAD takes the lease from it (docs/decisions.md, "Versioned engine features")
 * while it still runs; the previous release is then stopped (SIGTERM, as an upgrade does) while
 * the campaign is mid-batch, and the campaign completes with every node on the target and no
 * operation applied twice. Then the previous release starts again on the new schema, as
 * rolling the Control binary back does.
 *
 * PREVIOUS_RELEASE_COMMIT is the commit the release before HEAD's shipped from. When a release
 * lands, set it to the last commit of that release (its migrations all carry its schema
 * release, one below HEAD's new ones), so this test always runs the two releases an upgrade
 * runs side by side. The previous release runs on this checkout's node_modules (linked, so the
 * test installs nothing and needs no network); a release that changes a dependency the previous
 * one uses differently must keep both working or install the previous commit's own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { readSchemaRelease, SCHEMA_RELEASE } from "../../control/db/schema-release.js";
import {
  CampaignPhase,
  CampaignService,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import {
  checkoutPrevious,
  type PreviousCheckout,
  removePrevious,
} from "../helpers/previous-release.js";
import { artifactServer, freePort } from "../helpers/process-fixtures.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";
import { roundRobin } from "../helpers/round-robin.js";
import { isDone, NEW, quickSpec } from "./campaign-fixture.js";

/** The last commit of the previous release (schema release 1: migrations 0001 to 0017). */
const PREVIOUS_RELEASE_COMMIT = "48816f1e37eed0ed6c667bad60f353b5c964d85d";

const TOKEN = "mixed-version-operator-token-0123456789";
const AGENTS = 24;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One Control process: where its code lives, its ports, and the child while it runs. */
interface ControlProcess {
  readonly name: string;
  readonly cwd: string;
  readonly agentPort: number;
  readonly adminUrl: string;
  readonly env: NodeJS.ProcessEnv;
  child: ChildProcess | undefined;
  stderr: string;
}

describe("a Control of the previous release and one of HEAD on one database", () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let dir: string;
  let previous: PreviousCheckout | undefined;
  let artifacts: { server: Server; base: string } | undefined;
  let balancer: { port: number; close(): Promise<void> } | undefined;
  let fleet: Fleet | undefined;
  let pin = "";
  let envelope: Uint8Array = new Uint8Array();
  const controls: ControlProcess[] = [];

  const logs = () => controls.map((c) => `${c.name}:\n${c.stderr}`).join("\n");

  const start = async (c: ControlProcess) => {
    c.stderr = "";
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "control/main.ts", "--config", join(dir, "control.json")],
      {
        cwd: c.cwd,
        env: c.env,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    proc.stderr?.on("data", (chunk: Buffer) => {
      c.stderr = (c.stderr + chunk.toString()).slice(-4000);
    });
    c.child = proc;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`${c.name} exited at start:\n${c.stderr}`);
      const ok = await fetch(`${c.adminUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${c.name} not ready in 60 s:\n${c.stderr}`);
      await sleep(100);
    }
  };

  /** Stops `c` with `signal` and resolves with its exit code. */
  const stop = async (c: ControlProcess, signal: NodeJS.Signals): Promise<number | null> => {
    const proc = c.child;
    c.child = undefined;
    if (!proc || proc.exitCode !== null) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    proc.kill(signal);
    return exited;
  };

  const client = <S extends Parameters<typeof createClient>[0]>(service: S, c: ControlProcess) => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${TOKEN}`);
      return next(req);
    };
    return createClient(
      service,
      createConnectTransport({ baseUrl: c.adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
    );
  };

  /** The Control holding the campaign worker's lease, judged by the process id it names. */
  const leader = async (): Promise<ControlProcess | undefined> => {
    const { rows } = await sql.query<{ holder: string }>(
      "select holder from control_leases where name = 'campaign-worker' and expires_at > now()",
    );
    const holder = rows[0]?.holder;
    return controls.find((c) => c.child?.pid !== undefined && holder?.includes(`-${c.child.pid}-`));
  };

  /** `agent_control_is_leader` as `c` itself reports it on /metrics. */
  const leads = async (c: ControlProcess): Promise<number | undefined> => {
    const text = await (await fetch(`${c.adminUrl}/metrics`)).text();
    const value = /^agent_control_is_leader (\d+)$/m.exec(text)?.[1];
    return value === undefined ? undefined : Number(value);
  };

  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms\n${logs()}`);
      await sleep(100);
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase("mixed_version");
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    dir = await mkdtemp(join(tmpdir(), "agent-control-mixed-"));
    await chmod(dir, 0o755);
    previous = await checkoutPrevious(process.cwd(), PREVIOUS_RELEASE_COMMIT, dir);
    artifacts = await artifactServer();
    const [key] = await makeKeys(1);
    if (!key) throw new Error("no key");
    pin = key.pin;
    // Settings both releases read alike.
    await writeFile(
      join(dir, "control.json"),
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
        enrollment: { agentReportedLabels: ["group"] },
      }),
    );
    for (const [name, cwd] of [
      ["previous release", previous.path],
      ["HEAD", process.cwd()],
    ] as const) {
      const [agentPort, adminPort] = [await freePort(), await freePort()];
      controls.push({
        name,
        cwd,
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
          AGENT_CONTROL_DATA_DIR: join(dir, `data-${controls.length}`),
          AGENT_CONTROL_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
        },
      });
    }
    const release = await makeRelease({
      version: NEW,
      sequence: 20,
      keys: [key],
      platforms: ["linux-amd64"],
      urlBase: artifacts.base,
    });
    envelope = release.envelope;
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await Promise.all(controls.map((c) => stop(c, "SIGKILL")));
    await balancer?.close();
    if (artifacts) await new Promise((resolve) => artifacts?.server.close(resolve));
    await sql?.end();
    await db?.drop();
    // However far the set-up got: the worktree goes, and git forgets it.
    if (dir) await (previous?.remove() ?? removePrevious(process.cwd(), dir));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("runs a campaign across the upgrade: the previous leader stops mid-campaign and every node ends on the target", async () => {
    const [old, head] = controls as [ControlProcess, ControlProcess];
    // The previous release makes the schema and leads; HEAD migrates its own release on top.
    await start(old);
    const run = async (text: string, params?: readonly unknown[]) =>
      (await sql.query(text, params as unknown[])).rows;
    expect([SCHEMA_RELEASE - 1, SCHEMA_RELEASE]).toContain(await readSchemaRelease(run));
    await waitFor("the previous release leads", async () => (await leader()) === old);
    await start(head);
    expect(await readSchemaRelease(run)).toBe(SCHEMA_RELEASE);
    expect(await leader()).toBe(old);
    // One lease across the releases: each knows which of them leads.
    expect([await leads(old), await leads(head)]).toEqual([1, 0]);

    balancer = await roundRobin(controls.map((c) => c.agentPort));
    await client(ReleaseService, head).registerRelease({ envelope });
    const joinToken = (await client(NodeService, old).createJoinToken({})).secret;
    fleet = await startFleet({
      server: `127.0.0.1:${balancer.port}`,
      pins: [pin],
      joinToken,
      count: AGENTS,
      idPrefix: "mixed",
      labels: { group: "mixed" },
      restartMs: [150, 400],
      backoff: { baseMs: 100, capMs: 800, resetAfterMs: 1000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === AGENTS, 30_000, "fleet welcomed");
    // Both releases hold streams: the leader's operations reach the nodes of both through the outbox.
    const { nodes } = await client(NodeService, head).listNodes({ pageSize: 1000 });
    const held = new Set(nodes.filter((n) => n.online).map((n) => n.heldBy.split("-").at(-2)));
    expect(held).toEqual(new Set(controls.map((c) => String(c.child?.pid))));

    const { campaign } = await client(CampaignService, head).startCampaign({
      spec: quickSpec(NEW, [5, 50, 100], {
        selector: { labels: { group: "mixed" } },
        concurrency: 3,
        disruptionBudgetPercent: 100,
      }),
    });
    const id = campaign?.id ?? "";
    // Its engine features are HEAD's, not the previous release's: HEAD takes the lease over
    // from the live previous release, which stops leading.
    await waitFor("HEAD takes the lease from the previous release", async () => {
      return (await leader()) === head && (await leads(head)) === 1 && (await leads(old)) === 0;
    });
    const get = async () =>
      (await client(CampaignService, head).getCampaign({ id, summaryOnly: true })).campaign;
    await waitFor("six nodes past waiting", async () => {
      const c = await get();
      const waiting = c?.counts
        .filter((x) => x.state === NodeState.WAITING)
        .reduce((n, x) => n + x.count, 0);
      return waiting !== undefined && AGENTS - waiting >= 6;
    });
    expect(isDone(await get())).toBe(false);

    // The upgrade's step: the previous release drains and exits; HEAD takes the lease.
    expect(await stop(old, "SIGTERM")).toBe(0);
    await waitFor("HEAD leads", async () => (await leader()) === head && (await leads(head)) === 1);
    await waitFor("the campaign finished", async () => isDone(await get()), 90_000);

    const done = await client(CampaignService, head).getCampaign({ id });
    expect(done.campaign?.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.nodes).toHaveLength(AGENTS);
    expect(new Set(done.nodes.map((n) => `${NodeState[n.state]}/${n.code}`))).toEqual(
      new Set(["SUCCEEDED/"]),
    );
    for (const agent of fleet.agents) expect(agent.version).toBe(NEW);
    expect(fleet.stats().duplicateApplications).toBe(0);

    // Rolling the binary back: the previous release starts on the schema HEAD migrated.
    await start(old);
    expect(
      (await client(CampaignService, old).getCampaign({ id, summaryOnly: true })).campaign?.phase,
    ).toBe(CampaignPhase.COMPLETED);
    expect(await readSchemaRelease(run)).toBe(SCHEMA_RELEASE);
  }, 180_000);
});
