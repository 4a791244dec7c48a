import { mkdtemp, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ControlProcess, startControlProcess } from "../../agent-sim/demo/control-process.js";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { createTestDatabase, type TestDatabase } from "../helpers/database.js";
import { eventually } from "../helpers/raw-agent.js";

const COUNT = 1000;
const GRACE_S = 5;
const TOKEN = "operator-token-for-the-sigterm-test";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe(`SIGTERM with ${COUNT} live streams`, { timeout: 150_000 }, () => {
  let database: TestDatabase;
  let dataDir: string;
  let control: ControlProcess | undefined;
  let fleet: Fleet | undefined;
  let agentAddr = "";
  let adminAddr = "";
  const start = () =>
    startControlProcess({
      dataDir,
      agentAddr,
      adminAddr,
      config: { limits: { shutdownGraceSeconds: GRACE_S }, timeouts: { heartbeatSeconds: 5 } },
      env: { DATABASE_URL: database.url, AGENT_CONTROL_ADMIN_TOKEN: TOKEN },
    });
  beforeAll(async () => {
    database = await createTestDatabase("sigterm");
    dataDir = await mkdtemp(join(tmpdir(), "agent-control-sigterm-"));
    agentAddr = `127.0.0.1:${await freePort()}`;
    adminAddr = `127.0.0.1:${await freePort()}`;
    control = await start();
  });
  afterAll(async () => {
    await fleet?.stop();
    await control?.kill();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const nodes = () => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${TOKEN}`);
      return next(req);
    };
    return createClient(
      NodeService,
      createConnectTransport({
        baseUrl: `http://${adminAddr}`,
        httpVersion: "1.1",
        interceptors: [bearer],
      }),
    );
  };

  it("drains within its grace period, exits 0, and every agent reconnects to the restarted Control", async () => {
    const { secret } = await nodes().createJoinToken({ description: "sigterm" });
    fleet = await startFleet({
      server: agentAddr,
      joinToken: secret,
      count: COUNT,
      seed: 3,
      backoff: { baseMs: 200, capMs: 2000 },
    });
    await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 90_000, "all welcomed");

    const signalled = Date.now();
    const code = await control?.stop((GRACE_S + 10) * 1000);
    const drainMs = Date.now() - signalled;
    console.log(`drained ${COUNT} streams in ${drainMs} ms`);
    expect(code).toBe(0);
    // The grace bounds the drain; the margin covers process exit on a loaded two-core machine.
    expect(drainMs).toBeLessThan((GRACE_S + 8) * 1000);
    // Told to come back (UNAVAILABLE), not cut off.
    const told = fleet.agents.filter((a) => a.lastStatus === status.UNAVAILABLE).length;
    expect(told).toBeGreaterThan(COUNT * 0.95);

    control = await start();
    await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 90_000, "all back");
    await eventually(
      async () => (await nodes().listNodes({ online: true, pageSize: 1 })).totalSize === COUNT,
      15_000,
      "all online",
    );
    expect((await nodes().listNodes({ pageSize: 1 })).totalSize).toBe(COUNT);
  });
});
