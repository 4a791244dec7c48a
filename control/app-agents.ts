/**
 * Control's agent listener as wired at start: the stream and connection limits derived from
 * `limits.*` and the open-file limit, the handshake admission, the session dependencies
 * (authentication by token or certificate, enrollment, the stream bounds), and the gauges
 * `/metrics` reads of them.
 */
import { authenticateStream } from "./agents/authenticate.js";
import { throttledCloseLog } from "./agents/close-log.js";
import { acceptBacklog } from "./agents/connection-cap.js";
import { CredentialSlots, joinTokenHandshakes } from "./agents/credential-slots.js";
import { HANDSHAKE_ADMISSION, HandshakeAdmission } from "./agents/handshake-admission.js";
import type { AgentHub } from "./agents/hub.js";
import { pendingStreamLimit } from "./agents/pending-streams.js";
import { type AgentServer, startAgentServer } from "./agents/server.js";
import { Slots } from "./agents/slots.js";
import { currentStreamBudget } from "./agents/stream-budget.js";
import {
  UNAUTHENTICATED_CLOSES,
  UnauthenticatedConnections,
} from "./agents/unauthenticated-connections.js";
import type { Clock } from "./clock.js";
import type { ControlConfig } from "./config.js";
import type { Database } from "./db/database.js";
import type { JoinTokenReader } from "./db/join-token-reader.js";
import type { NodeStore } from "./db/node-store.js";
import type { Logger } from "./log.js";
import type { AgentMetrics, ControlMetrics } from "./metrics/index.js";
import { readKernelAcceptQueueCap } from "./shared/kernel-accept-queue.js";
import { certificateDenied, recordCertifiedHello } from "./tls/certificate-nodes.js";
import { agentServerCredentials } from "./tls/credentials.js";

/** Capabilities this Control offers Agents. */
export const CONTROL_CAPABILITIES = ["upgrade.v1", "config.v1", "trust.v1", "defer.v1"] as const;

/** What {@link startAgentListener} needs: the parts of Control the streams work with. */
export interface AgentListenerOptions {
  readonly config: ControlConfig;
  readonly log: Logger;
  readonly clock: Clock;
  readonly db: Database;
  readonly nodes: NodeStore;
  readonly joinTokens: JoinTokenReader;
  readonly hub: AgentHub;
  /** This process's run id, recorded as the holder of nodes enrolled by certificate. */
  readonly instanceId: string;
  readonly metrics: ControlMetrics;
  readonly agentCounters: AgentMetrics;
}

/**
 * Starts the agent listener on `config.agentAddr` with its limits logged (and warned about
 * where they were lowered) and its gauges registered in `metrics`. Resolves once it listens.
 */
export async function startAgentListener(o: AgentListenerOptions): Promise<AgentServer> {
  const { config, log, clock, db, nodes, hub, metrics } = o;
  // limits.maxStreams and the connection cap under it: see control/agents/stream-budget.ts.
  const budget = currentStreamBudget(config.limits.maxStreams);
  const { warning, ...budgetFacts } = budget;
  // The accept queue the listener asks for (from the same maxConnections) and the kernel's cap
  // on it: see control/agents/connection-cap.ts.
  const queue = {
    acceptBacklog: acceptBacklog(budget.maxConnections),
    kernelAcceptQueueCap: readKernelAcceptQueueCap(),
  };
  const unauthenticatedLimits = {
    agentConnectionAuthSeconds: config.timeouts.agentConnectionAuthSeconds,
    agentUnauthenticatedConnectionsPerAddress:
      config.limits.agentUnauthenticatedConnectionsPerAddress,
  };
  log.info(
    { ...budgetFacts, ...queue, ...unauthenticatedLimits },
    "agent stream and connection limits",
  );
  if (warning) log.warn({ ...budgetFacts }, warning);
  const streams = new Slots(budget.maxStreams);
  const maxHandshakes = config.limits.maxConcurrentHandshakes;
  const handshakes = new HandshakeAdmission({
    ...HANDSHAKE_ADMISSION,
    maxConcurrent: maxHandshakes,
    minConcurrent: Math.min(HANDSHAKE_ADMISSION.minConcurrent, maxHandshakes),
    now: () => clock.now().getTime(),
  });
  const drops = metrics.counter(
    "agent_control_agent_connections_dropped_total",
    "TCP connections to the agent listener closed at accept: the connection limit was reached.",
  );
  const unauthenticatedClosed = metrics.counter(
    "agent_control_agent_connections_unauthenticated_closed_total",
    "Connections to the agent listener closed before a stream on them authenticated: auth_deadline (none within timeouts.agentConnectionAuthSeconds) or unauthenticated_per_address (closed at accept: limits.agentUnauthenticatedConnectionsPerAddress).",
    ["reason"],
    UNAUTHENTICATED_CLOSES.map((reason) => ({ reason })),
  );
  const closeLog = throttledCloseLog(log, clock, 60_000);
  const unauthenticated = new UnauthenticatedConnections({
    deadlineMs: config.timeouts.agentConnectionAuthSeconds * 1000,
    perAddress: config.limits.agentUnauthenticatedConnectionsPerAddress,
    clock,
    closed: (reason, address) => {
      unauthenticatedClosed.inc({ reason });
      closeLog(reason, address);
    },
  });
  const agentServer: AgentServer = await startAgentServer({
    address: config.agentAddr,
    maxMessageBytes: config.limits.maxMessageBytes,
    maxAgentMessageBytes: config.limits.maxAgentMessageBytes,
    credentials: agentServerCredentials(config.tls.agent),
    maxConnections: budget.maxConnections,
    connectionDropped: () => drops.inc(),
    unauthenticated,
    log,
    session: {
      hub,
      nodes,
      clock,
      log: log.child({ component: "agents" }),
      authenticate: (authorization, peerCertificate) =>
        authenticateStream(
          authorization,
          {
            joinTokens: o.joinTokens,
            nodes,
            clock,
            certificateIdentity: config.enrollment.certificateIdentity,
            certificateDenied: (fingerprint, now) => certificateDenied(db.pool, fingerprint, now),
          },
          peerCertificate,
        ),
      recordCertifiedHello: (hello, sessionId, now, certificate) =>
        recordCertifiedHello(
          db.pool,
          hello,
          sessionId,
          now,
          o.instanceId,
          certificate,
          config.enrollment.requireApproval,
        ),
      capabilities: CONTROL_CAPABILITIES,
      agentReportedLabels: config.enrollment.agentReportedLabels,
      heartbeatIntervalMs: config.timeouts.heartbeatSeconds * 1000,
      helloTimeoutMs: 10_000,
      sendQueueLength: config.limits.sendQueueLength,
      messagesPerSecond: config.limits.agentMessagesPerSecond,
      byteBudget: {
        bytesPerSecond: config.limits.agentStreamBytesPerSecond,
        burstBytes: config.limits.agentStreamBurstBytes,
      },
      handshakes,
      credentialHandshakes: new CredentialSlots(
        config.limits.handshakesPerCredential,
        joinTokenHandshakes(
          config.limits.handshakesPerCredential,
          Math.min(HANDSHAKE_ADMISSION.minConcurrent, maxHandshakes),
        ),
      ),
      streams,
      pendingStreams: new Slots(pendingStreamLimit(budget.maxStreams)),
      newNodesPending: config.enrollment.requireApproval,
      refused: o.agentCounters.refused,
      handshaken: o.agentCounters.handshake,
    },
  });
  metrics.gauge("agent_control_streams", "Agent streams open on this Control.", () => hub.size);
  metrics.gauge(
    "agent_control_handshakes_in_flight",
    "Agent streams between an authenticated credential and Welcome.",
    () => handshakes.held,
  );
  metrics.gauge(
    "agent_control_handshakes_admitted",
    "Agent handshakes this Control takes on at once now: what it finishes in 10 s at its current rate, up to limits.maxConcurrentHandshakes.",
    () => handshakes.limit,
  );
  metrics.gauge(
    "agent_control_streams_held",
    "Agent streams counted against limits.maxStreams: handshaking or live.",
    () => streams.held,
  );
  metrics.gauge(
    "agent_control_streams_limit",
    "limits.maxStreams: agent streams this Control holds at once.",
    () => streams.limit,
  );
  metrics.gauge(
    "agent_control_agent_connections",
    "TCP connections open on the agent listener.",
    () => agentServer.connections,
  );
  metrics.gauge(
    "agent_control_agent_connections_unauthenticated",
    "TCP connections open on the agent listener on which no stream has authenticated yet.",
    () => unauthenticated.size,
  );
  metrics.gauge(
    "agent_control_agent_connections_limit",
    "TCP connections the agent listener holds at once (derived from limits.maxStreams and the open-file limit).",
    () => budget.maxConnections,
  );
  return agentServer;
}
