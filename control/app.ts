/**
 * Control as one object with a lifecycle: open the database (embedded or `DATABASE_URL`),
 * start the agent and admin servers, and stop them in order. `main.ts` runs it as a
 * process; tests run it in-process on port 0.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { NodeService } from "../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { VersionService } from "../proto/gen/agentcontrol/admin/v1/version_pb.js";
import { resolveOperatorToken } from "./admin/auth.js";
import { authFailureSink } from "./admin/auth-failures.js";
import { createNodeService } from "./admin/node-service.js";
import { createReleaseService } from "./admin/release-service.js";
import { type AdminServer, startAdminServer } from "./admin/server.js";
import { createTokenReloader, type TokenReload } from "./admin/token-reload.js";
import { createVersionService } from "./admin/version-service.js";
import { authenticateStream } from "./agents/authenticate.js";
import { AgentHub } from "./agents/hub.js";
import { trustRecorder } from "./agents/trust-recorder.js";
import { startAgentListener } from "./app-agents.js";
import { startTufChannel } from "./app-tuf.js";
import { createCampaignEngine } from "./campaign-engine.js";
import { type Clock, systemClock } from "./clock.js";
import { type ControlConfig, listenerFacts } from "./config.js";
import { adminServerLimits } from "./config-admin.js";
import { clearTextExposed } from "./config-clear-text.js";
import { ControlInstances } from "./db/control-instances.js";
import { type Database, openDatabase } from "./db/database.js";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./db/embedded-postgres.js";
import { JoinTokenReader } from "./db/join-token-reader.js";
import { NodeStore } from "./db/node-store.js";
import { recordNodeTrust } from "./db/node-trust.js";
import type { Logger } from "./log.js";
import { agentMetrics, ControlMetrics, campaignMetrics, fleetGauges } from "./metrics/index.js";
import { createArtifactChunks } from "./releases/artifact-chunks.js";
import { type DownloadAuthenticator, downloadsRoute } from "./releases/downloads.js";
import { type DownloadsServer, startDownloadsServer } from "./releases/downloads-server.js";
import type { HttpRoute } from "./shared/http-route.js";
import { formatAddress } from "./shared/listen-address.js";
import { certificateDenied } from "./tls/certificate-nodes.js";
import { dashboardRoute } from "./ui/route.js";

export { CONTROL_CAPABILITIES } from "./app-agents.js";

/** Options of {@link startControl}. */
export interface StartControlOptions {
  readonly config: ControlConfig;
  readonly log: Logger;
  readonly clock?: Clock;
}

/** A running Control. */
export interface Control {
  /** A unique id of this process's run, in logs and leases. */
  readonly instanceId: string;
  readonly agentPort: number;
  readonly adminUrl: string;
  /** The admin API's Unix socket (`adminSocket`), where agentctl sends the local token file. */
  readonly adminSocket: string;
  /** The downloads listener's URL when `downloads.addr` is set (else downloads are on the admin port). */
  readonly downloadsUrl: string | undefined;
  /** The operator token and where it came from. */
  readonly operatorToken: string;
  readonly operatorTokenPath: string;
  readonly db: Database;
  readonly hub: AgentHub;
  /** This Control's metrics (`/metrics`); a `--workers` worker has them answer for its group. */
  readonly metrics: ControlMetrics;
  /**
   * Re-reads the admin tokens file (SIGHUP): a valid file's tokens are in force from the next
   * call on, calls and streams already authenticated go on; a bad one is logged and ignored.
   */
  reloadAdminTokens(options?: { readonly quiet?: boolean }): TokenReload;
  /** Drains streams (within the configured grace), stops servers, closes the database. */
  stop(): Promise<void>;
}

/** Starts every part of Control; on failure, stops what already started and rethrows. */
export async function startControl(options: StartControlOptions): Promise<Control> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log;
  // Unique per run; names the host and process for whoever reads `held_by` or the lease.
  const instanceId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const cleanup: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const step of cleanup.reverse()) {
      await step().catch((error: unknown) => log.error({ err: error }, "shutdown step failed"));
    }
    cleanup.length = 0;
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const embedded: EmbeddedDatabase = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        onLog: (line) => log.debug({ component: "postgres" }, line),
      });
      cleanup.push(() => embedded.stop());
      databaseUrl = embedded.url;
      log.info({ dataDir: config.dataDir }, "embedded PostgreSQL started");
    }
    if (config.allowInsecure) {
      for (const l of clearTextExposed(listenerFacts(config))) {
        log.warn(
          { setting: l.name, addr: formatAddress(l.addr) },
          `${l.name} ${formatAddress(l.addr)} serves clear text off loopback (allowInsecure): tokens and operations can be read and forged on the network; configure ${l.tlsSetting}`,
        );
      }
    }
    const db = await openDatabase({ url: databaseUrl, log });
    cleanup.push(() => db.close());
    // Other Controls may serve this database: a Hello records this one as the node's holder,
    // and only the nodes of Controls that are gone are marked offline (the sweep below).
    const nodes = new NodeStore(db.pool, {
      holder: instanceId,
      requireApproval: config.enrollment.requireApproval,
    });
    const joinTokens = new JoinTokenReader(db.pool);
    const metrics = new ControlMetrics();
    const agentCounters = agentMetrics(metrics);
    fleetGauges(metrics, { pool: db.pool, log });

    const hub = new AgentHub({
      clock,
      store: nodes,
      log,
      sent: agentCounters.sent,
      offlineAfterMs: config.timeouts.offlineAfterSeconds * 1000,
      flushIntervalMs: Math.min(5000, config.timeouts.heartbeatSeconds * 1000),
    });
    cleanup.push(() => hub.stop());
    hub.subscribe(agentCounters.onEvent);
    const trust = trustRecorder({
      record: (t) => recordNodeTrust(db.pool, t),
      log: log.child({ component: "agents" }),
    });
    hub.subscribe(trust.onEvent);
    cleanup.push(async () => {
      if (!(await trust.settledWithin(clock, config.limits.shutdownGraceSeconds * 1000))) {
        log.warn("stopped waiting for trust-status writes: the shutdown grace ran out");
      }
    });
    const instances = new ControlInstances({
      pool: db.pool,
      instanceId,
      name: `${hostname()} pid ${process.pid}`,
      log,
      heartbeatMs: Math.min(5000, Math.max(1000, config.worker.intervalMs)),
      staleAfterMs: 30_000,
      heldStreams: () => hub.heldStreams(),
    });
    await instances.start();
    cleanup.push(() => instances.stop());

    const agentServer = await startAgentListener({
      config,
      log,
      clock,
      db,
      nodes,
      joinTokens,
      hub,
      instanceId,
      metrics,
      agentCounters,
    });
    const drainAgents = () => agentServer.drain(config.limits.shutdownGraceSeconds * 1000);
    cleanup.push(drainAgents);

    const operator = await resolveOperatorToken(config.adminToken, config.dataDir);
    if (operator.source === "generated") {
      log.info({ path: operator.path }, "generated the operator admin token");
    }
    const adminTokens = createTokenReloader({
      operatorToken: operator.token,
      configured: config.adminTokens,
      file: config.adminTokensFile,
      log,
    });
    const downloadsTotal = metrics.counter(
      "agent_control_downloads_total",
      "Artifact download requests answered, by HTTP status.",
      ["status"],
    );
    const authenticateDownload: DownloadAuthenticator = (authorization, peerCertificate) =>
      authenticateStream(
        authorization,
        {
          joinTokens,
          nodes,
          clock,
          certificateIdentity: config.enrollment.certificateIdentity,
          certificateDenied: (fingerprint, now) => certificateDenied(db.pool, fingerprint, now),
        },
        peerCertificate,
      );
    const downloads = downloadsRoute({
      db,
      chunks: createArtifactChunks({ pool: db.pool }),
      maxConcurrent: config.downloads.maxConcurrent,
      maxPerClient: config.downloads.maxPerClient,
      stallMs: config.downloads.stallTimeoutSeconds * 1000,
      authenticate: config.downloads.requireAuth ? authenticateDownload : undefined,
      onAnswer: (status) => downloadsTotal.inc({ status: String(status) }),
      // Client certificates are verified only by a downloads listener with a client CA.
      clientCertificates:
        config.downloads.addr !== undefined && config.tls.downloads?.clientCa !== undefined,
      log: log.child({ component: "downloads" }),
    });
    metrics.gauge(
      "agent_control_downloads_in_flight",
      "Artifact downloads being served now.",
      downloads.active,
    );
    // The release channel's TUF metadata, beside the downloads and ahead of their credential.
    const tuf = await startTufChannel({ config, db, clock, metrics });
    const agentRoute: HttpRoute =
      tuf === undefined
        ? downloads.route
        : async (req, res) => (await tuf(req, res)) || downloads.route(req, res);
    let downloadsServer: DownloadsServer | undefined;
    if (config.downloads.addr) {
      const server = await startDownloadsServer({
        address: config.downloads.addr,
        tls: config.tls.downloads,
        route: agentRoute,
        log,
        idleMs: config.downloads.stallTimeoutSeconds * 1000,
        maxConnections: config.downloads.maxConnections,
      });
      downloadsServer = server;
      cleanup.push(() => server.close());
    }
    // Agents download from the downloads listener when there is one, else from the admin port.
    let publicUrl = config.publicUrl ?? downloadsServer?.url ?? "";
    // ── campaign engine (control/campaign-worker): worker + CampaignService/AuditService ──
    const campaigns = createCampaignEngine({
      adminTokens: adminTokens.table.entries,
      db,
      gateway: hub,
      clock,
      log,
      config,
      instanceId,
      publicUrl: () => publicUrl,
      observer: campaignMetrics(metrics),
    });
    // ── end campaign engine ──
    const adminServer: AdminServer = await startAdminServer({
      address: config.adminAddr,
      clock,
      socket: config.adminSocket,
      tls: config.tls.admin,
      limits: adminServerLimits(config),
      tokens: adminTokens.table.entries,
      metrics,
      onAuthFailure: authFailureSink({ pool: db.pool, clock, log, metrics }),
      ready: () => db.ping(),
      log,
      extraRoutes: [dashboardRoute({ log }), ...(downloadsServer ? [] : [agentRoute])],
      routes: (router) => {
        router.service(
          NodeService,
          createNodeService({
            db,
            hub,
            clock,
            activeCampaignOf: campaigns.activeCampaignOf,
            instanceId,
          }),
        );
        campaigns.routes(router);
        router.service(VersionService, createVersionService({ instanceId }));
        router.service(
          ReleaseService,
          createReleaseService({
            db,
            clock,
            pins: config.release.pins,
            threshold: config.release.threshold,
            publicUrl: () => publicUrl,
          }),
        );
      },
    });
    publicUrl ||= adminServer.url;
    // The admin port closes once the agent streams have drained, answering NOT_SERVING (gRPC
    // health) and 503 (/readyz) meanwhile, so load balancers move away before it goes.
    cleanup.splice(cleanup.indexOf(drainAgents), 0, () => adminServer.close());
    campaigns.start(); // campaign engine: runs once publicUrl is known; stops before the server
    cleanup.push(() => campaigns.stop());
    // Runs first on stop: gRPC health tells load balancers NOT_SERVING before the port closes.
    cleanup.push(async () => adminServer.drain());
    log.info(
      {
        agentPort: agentServer.port,
        adminUrl: adminServer.url,
        downloadsUrl: downloadsServer?.url,
        instanceId,
      },
      "Control is serving",
    );
    return {
      instanceId,
      agentPort: agentServer.port,
      adminUrl: adminServer.url,
      adminSocket: config.adminSocket,
      downloadsUrl: downloadsServer?.url,
      operatorToken: operator.token,
      operatorTokenPath: operator.path,
      db,
      hub,
      metrics,
      reloadAdminTokens: adminTokens.reload,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
