/**
 * More agents than Control can hold: it holds `limits.maxStreams` of them, refuses the rest
 * with RESOURCE_EXHAUSTED before any credential is looked at, keeps serving the admin API,
 * and lets waiting agents in as others leave. As a child process under `ulimit -n 256`, it
 * derives its limit from the open-file limit and neither crashes nor runs out of
 * descriptors, even when connections that never open a stream pile up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { streamBudget } from "../../control/agents/stream-budget.js";
import { freePort } from "../../control/db/embedded-postgres.js";
import { readOpenFileLimit } from "../../control/shared/open-file-limit.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { eventually, hello, openRawStream } from "../helpers/raw-agent.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of one series (`name` or `name{labels}`) in a Prometheus text, NaN if absent. */
function seriesValue(text: string, series: string): number {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return Number.NaN;
}

async function scrape(adminUrl: string): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`);
  expect(response.status).toBe(200);
  return await response.text();
}

const REFUSED = 'agent_control_streams_refused_total{reason="max_streams"}';

describe("limits.maxStreams: Control holds what it can and refuses the rest", () => {
  const LIMIT = 20;
  const COUNT = 30;
  let tc: TestControl;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    tc = await startTestControl({ config: { limits: { maxStreams: LIMIT } } });
  });
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
  });

  it("holds exactly 20 of 30 agents, refuses the others before authentication while they back off, keeps the admin API, and lets waiting agents in when some leave", async () => {
    const join = await tc.joinToken();
    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: join,
      count: COUNT,
      seed: 23,
      backoff: { baseMs: 100, capMs: 800 },
    });
    const f = fleet;
    await f.waitUntil((x) => x.welcomedCount() === LIMIT, 30_000, "20 agents welcomed");

    // Held steadily at the limit, never above it, while the others keep trying.
    let peak = 0;
    for (let i = 0; i < 20; i += 1) {
      peak = Math.max(peak, f.welcomedCount(), tc.control.hub.size);
      await sleep(50);
    }
    expect(peak).toBe(LIMIT);
    expect(tc.control.hub.size).toBe(LIMIT);
    const waiting = f.agents.filter((agent) => !agent.welcomed);
    expect(waiting).toHaveLength(COUNT - LIMIT);
    await eventually(
      () => waiting.every((agent) => agent.lastStatus === status.RESOURCE_EXHAUSTED),
      5000,
      "every waiting agent refused with RESOURCE_EXHAUSTED",
    );

    // Refused before any credential is looked at: no token at all still hears
    // RESOURCE_EXHAUSTED, not UNAUTHENTICATED.
    const anonymous = openRawStream(tc.agentAddress, undefined);
    anonymous.send(hello("anonymous-1"));
    const refused = await anonymous.ended;
    expect(refused.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(refused.details).toMatch(/holds as many agent streams as it allows/);

    // The refused agents back off: a handful of attempts each over two seconds, not a loop.
    const before = seriesValue(await scrape(tc.adminUrl), REFUSED);
    await sleep(2000);
    const text = await scrape(tc.adminUrl);
    const during = seriesValue(text, REFUSED) - before;
    expect(during).toBeGreaterThan(0);
    expect(during).toBeLessThan((COUNT - LIMIT) * 15);
    expect(seriesValue(text, "agent_control_streams")).toBe(LIMIT);
    expect(seriesValue(text, "agent_control_streams_held")).toBe(LIMIT);
    expect(seriesValue(text, "agent_control_streams_limit")).toBe(LIMIT);
    expect(seriesValue(text, 'agent_control_streams_refused_total{reason="max_handshakes"}')).toBe(
      0,
    );
    expect(seriesValue(text, "agent_control_agent_connections_limit")).toBe(LIMIT + 8);
    expect(seriesValue(text, "agent_control_agent_connections")).toBeLessThanOrEqual(LIMIT + 8);

    // The admin API answers meanwhile.
    const online = await tc.client(NodeService).listNodes({ online: true });
    expect(online.totalSize).toBe(LIMIT);

    // Five held agents leave: five waiting ones take their places, and no more.
    const leaving = f.agents.filter((agent) => agent.welcomed).slice(0, 5);
    await Promise.all(leaving.map((agent) => agent.stop()));
    await eventually(
      () => waiting.filter((agent) => agent.welcomed).length === 5,
      15_000,
      "five waiting agents welcomed",
    );
    await sleep(500);
    expect(f.welcomedCount()).toBe(LIMIT);
    expect(tc.control.hub.size).toBe(LIMIT);
    expect(seriesValue(await scrape(tc.adminUrl), "agent_control_streams_held")).toBe(LIMIT);
  });
});

const OPEN_FILES = 256;
const TOKEN = "max-streams-operator-token-0123456789";

describe.runIf(readOpenFileLimit() !== undefined)(
  "Control as a process under `ulimit -n 256` with more agents than it can hold",
  { timeout: 120_000 },
  () => {
    const derived = streamBudget(undefined, OPEN_FILES);
    // Without the limits, 300 agents take all 256 descriptors: database connects fail with
    // EMFILE and the admin API resets its connections.
    const AGENTS = 300;
    let db: TestDatabase;
    let dataDir = "";
    let child: ChildProcess | undefined;
    let output = "";
    let adminUrl = "";
    let agentAddress = "";
    let fleet: Fleet | undefined;
    const idle: Socket[] = [];

    const nodes = (): Client<typeof NodeService> => {
      const bearer: Interceptor = (next) => (req) => {
        req.header.set("authorization", `Bearer ${TOKEN}`);
        return next(req);
      };
      return createClient(
        NodeService,
        createConnectTransport({ baseUrl: adminUrl, httpVersion: "1.1", interceptors: [bearer] }),
      );
    };
    const openFiles = () => readdirSync(`/proc/${child?.pid}/fd`).length;

    beforeAll(async () => {
      db = await createTestDatabase("max_streams_process");
      dataDir = await mkdtemp(join(tmpdir(), "agent-control-max-streams-"));
      agentAddress = `127.0.0.1:${await freePort()}`;
      const adminAddress = `127.0.0.1:${await freePort()}`;
      adminUrl = `http://${adminAddress}`;
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: db.url,
        AGENT_CONTROL_DATA_DIR: dataDir,
        AGENT_CONTROL_AGENT_ADDR: agentAddress,
        AGENT_CONTROL_ADMIN_ADDR: adminAddress,
        AGENT_CONTROL_ADMIN_TOKEN: TOKEN,
        AGENT_CONTROL_LOG_LEVEL: "info",
      };
      delete env.AGENT_CONTROL_MAX_STREAMS;
      // The 300 agents share one join token: the per-credential handshake cap would only slow
      // their enrollment, which is not what this test measures.
      const configFile = join(dataDir, "config.json");
      await writeFile(configFile, JSON.stringify({ limits: { handshakesPerCredential: 1000 } }));
      env.AGENT_CONTROL_CONFIG = configFile;
      // `exec` replaces bash, so child.pid is Control's own Node.js process.
      child = spawn(
        "bash",
        [
          "-c",
          `ulimit -n ${OPEN_FILES} && exec "$0" --import tsx control/main.ts`,
          process.execPath,
        ],
        { cwd: process.cwd(), env, stdio: ["ignore", "pipe", "pipe"] },
      );
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      const proc = child;
      await eventually(
        async () => {
          if (proc.exitCode !== null) throw new Error(`Control exited at start:\n${output}`);
          return await fetch(`${adminUrl}/readyz`).then(
            (r) => r.ok,
            () => false,
          );
        },
        60_000,
        "Control ready",
      );
    });

    afterEach(() => {
      for (const socket of idle.splice(0)) socket.destroy();
    });

    afterAll(async () => {
      for (const socket of idle.splice(0)) socket.destroy();
      await fleet?.stop();
      const proc = child;
      if (proc && proc.exitCode === null) {
        const exited = new Promise((resolve) => proc.once("exit", resolve));
        proc.kill("SIGTERM");
        await Promise.race([exited, sleep(15_000)]);
        if (proc.exitCode === null) proc.kill("SIGKILL");
      }
      await db?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it("derives its limit from the open-file limit, holds that many, stays up with the admin API answering, and never runs out of descriptors", async () => {
      const proc = child as ChildProcess;
      const limits = await scrape(adminUrl);
      expect(seriesValue(limits, "agent_control_streams_limit")).toBe(derived.maxStreams);
      expect(seriesValue(limits, "agent_control_agent_connections_limit")).toBe(
        derived.maxConnections,
      );

      const join = (await nodes().createJoinToken({ description: "max streams" })).secret;
      fleet = await startFleet({
        server: agentAddress,
        joinToken: join,
        count: AGENTS,
        seed: 5,
        backoff: { baseMs: 200, capMs: 2000 },
      });
      const f = fleet;
      await f.waitUntil(
        (x) => x.welcomedCount() === derived.maxStreams,
        60_000,
        `${derived.maxStreams} agents welcomed`,
      );

      // Connections that never open a stream pile up on top: they are closed at accept once
      // the connection limit is reached, so descriptors never run out.
      for (let i = 0; i < 300; i += 1) {
        const [host, port] = agentAddress.split(":");
        const socket = connect({ host, port: Number(port) });
        socket.on("error", () => undefined);
        idle.push(socket);
      }

      // For five seconds: the held count never falls, Control stays up, its descriptors stay
      // below the limit, and the admin API answers.
      let lowest = Number.POSITIVE_INFINITY;
      let highest = 0;
      let mostFiles = 0;
      for (let i = 0; i < 25; i += 1) {
        expect(proc.exitCode, output).toBeNull();
        const text = await scrape(adminUrl);
        const held = seriesValue(text, "agent_control_streams");
        lowest = Math.min(lowest, held);
        highest = Math.max(highest, held);
        mostFiles = Math.max(mostFiles, openFiles());
        expect((await fetch(`${adminUrl}/healthz`)).status).toBe(200);
        await sleep(200);
      }
      expect(lowest).toBe(derived.maxStreams);
      expect(highest).toBe(derived.maxStreams);
      expect(mostFiles).toBeLessThan(OPEN_FILES);
      expect(f.welcomedCount()).toBe(derived.maxStreams);

      const text = await scrape(adminUrl);
      const turnedAway =
        seriesValue(text, REFUSED) +
        seriesValue(text, "agent_control_agent_connections_dropped_total");
      expect(turnedAway).toBeGreaterThan(0);
      expect(seriesValue(text, "agent_control_agent_connections_dropped_total")).toBeGreaterThan(0);
      expect(seriesValue(text, "agent_control_agent_connections")).toBeLessThanOrEqual(
        derived.maxConnections,
      );
      const online = await nodes().listNodes({ online: true });
      expect(online.totalSize).toBe(derived.maxStreams);
      expect((await fetch(`${adminUrl}/readyz`)).status).toBe(200);
      expect(output).not.toMatch(/EMFILE|uncaught|failed to start/i);
      expect(proc.exitCode).toBeNull();
    });
  },
);
