/**
 * Runs a real Control in the test process: a fresh PostgreSQL database, the agent gRPC
 * server and the Connect admin server on loopback port 0, an operator and a viewer token.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type Control, startControl } from "../../control/app.js";
import { sha256OfText } from "../../control/auth/secrets.js";
import type { Clock } from "../../control/clock.js";
import { loadConfig } from "../../control/config.js";
import type { ConfigInput } from "../../control/config-reader.js";
import { createLogger, type Logger } from "../../control/log.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { createTestDatabase, type TestDatabase } from "./database.js";

/** A Control running for one test file. */
export interface TestControl {
  readonly control: Control;
  readonly adminUrl: string;
  /** `127.0.0.1:<port>` of the agent server. */
  readonly agentAddress: string;
  readonly operatorToken: string;
  readonly viewerToken: string;
  readonly dataDir: string;
  readonly database: TestDatabase;
  /** A Connect client of `service` authenticated with `token` (default: operator). */
  client<S extends DescService>(service: S, token?: string): Client<S>;
  /** Creates a fresh join token through the admin API. */
  joinToken(): Promise<string>;
  /** Stops Control and starts it again on the same database and data dir. */
  restart(): Promise<void>;
  /** Stops Control, drops the database and the data dir. */
  stop(): Promise<void>;
}

/** Options of {@link startTestControl}. */
export interface TestControlOptions {
  /** Config values (same keys as the config file). */
  readonly config?: ConfigInput;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Reuse this database instead of creating one. */
  readonly database?: TestDatabase;
  /** The CA that signed the admin server's certificate, when the config serves it over TLS. */
  readonly adminCa?: Buffer;
}

/** The viewer token every test Control accepts. */
export const VIEWER_TOKEN = "viewer-token-for-tests-0123456789";
/** The operator token every test Control accepts. */
export const OPERATOR_TOKEN = "operator-token-for-tests-0123456789";

/** Starts a Control for a test; call `stop()` in `afterAll`. */
export async function startTestControl(options: TestControlOptions = {}): Promise<TestControl> {
  const database = options.database ?? (await createTestDatabase("control"));
  const dataDir = await mkdtemp(join(tmpdir(), "agent-control-data-"));
  const configFor = (agentPort: number, adminPort: number) =>
    loadConfig({
      env: {},
      overrides: {
        dataDir,
        databaseUrl: database.url,
        agentAddr: `127.0.0.1:${agentPort}`,
        adminAddr: `127.0.0.1:${adminPort}`,
        adminToken: OPERATOR_TOKEN,
        adminTokens: [{ name: "viewer", role: "viewer", sha256: sha256OfText(VIEWER_TOKEN) }],
        // Simulated fleets report their labels (pool, canary, selectors) in Hello; tests of
        // which labels are trusted configure `enrollment` themselves.
        enrollment: { agentReportedLabels: ["*"] },
        ...options.config,
        limits: { shutdownGraceSeconds: 2, ...(options.config?.limits as object | undefined) },
      },
    });
  const log = options.log ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const start = (agentPort: number, adminPort: number) =>
    startControl({
      config: configFor(agentPort, adminPort),
      log,
      ...(options.clock ? { clock: options.clock } : {}),
    });
  let control = await start(0, 0);
  const clientFor = <S extends DescService>(service: S, token = OPERATOR_TOKEN): Client<S> => {
    const bearer: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    };
    return createClient(
      service,
      createConnectTransport({
        baseUrl: control.adminUrl,
        httpVersion: "1.1",
        interceptors: [bearer],
        ...(options.adminCa ? { nodeOptions: { ca: options.adminCa } } : {}),
      }),
    );
  };
  const fixture: TestControl = {
    get control() {
      return control;
    },
    get adminUrl() {
      return control.adminUrl;
    },
    get agentAddress() {
      return `127.0.0.1:${control.agentPort}`;
    },
    operatorToken: OPERATOR_TOKEN,
    viewerToken: VIEWER_TOKEN,
    dataDir,
    database,
    client: clientFor,
    async joinToken() {
      const response = await clientFor(NodeService).createJoinToken({ description: "test" });
      return response.secret;
    },
    async restart() {
      // Same ports, so agents find the restarted Control where they left it.
      const agentPort = control.agentPort;
      const adminPort = Number(new URL(control.adminUrl).port);
      await control.stop();
      control = await start(agentPort, adminPort);
    },
    async stop() {
      await control.stop();
      if (!options.database) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}
