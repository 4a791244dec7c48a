/**
 * One agent stream, from its first byte to its status: authenticate, wait for Hello,
 * enroll or recognise the node, negotiate capabilities, Welcome, then heartbeats, reports
 * and outgoing operations until the stream ends.
 *
 * Nothing an Agent sends can throw out of here: every failure ends this stream alone with
 * a gRPC status that says what was wrong.
 */
import { randomUUID } from "node:crypto";
import type { PeerCertificate } from "node:tls";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { type ServerDuplexStream, status } from "@grpc/grpc-js";
import {
  type AgentMessage,
  type ControlMessage,
  ControlMessageSchema,
  type Hello,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { Clock } from "../clock.js";
import { scheduleOnce } from "../clock-timer.js";
import type { NodeHello, NodeStore } from "../db/node-store.js";
import { ControlError, toGrpcStatus } from "../errors.js";
import type { Logger } from "../log.js";
import type { CertificateFacts, StreamIdentity } from "./authenticate.js";
import { honouredReport } from "./defer-capability.js";
import { enrollWithJoinToken } from "./enrollment.js";
import type { ConnectedNode } from "./events.js";
import type { AgentHub, HubSession } from "./hub.js";
import { type ByteBudget, InboundBudget } from "./inbound-budget.js";
import { type EncodedOperation, operationFrame } from "./operation-frame.js";
import { pendingStreamsRefusal } from "./pending-streams.js";
import { reportedLabels } from "./reported-labels.js";
import {
  admitHandshake,
  admitStream,
  type HandshakeResult,
  type StreamBounds,
} from "./stream-bounds.js";
import { StreamWriter } from "./stream-writer.js";
import type { ConnectionAuthEvents } from "./unauthenticated-connections.js";
import { checkHello, checkObserved, checkTrustStatus } from "./validate.js";

/** A message that failed to decode; the stream ends with INVALID_ARGUMENT. */
export const MALFORMED = Symbol("malformed");

/** What arrives on the stream: a decoded message or the malformed marker. */
export type IncomingMessage = AgentMessage | { readonly [MALFORMED]: string };

/** Shared dependencies of every session. */
export interface SessionDeps extends StreamBounds {
  readonly hub: AgentHub;
  readonly nodes: NodeStore;
  /** Time of the session: last-seen stamps, the rate limit, the handshake timeout, write deadlines. */
  readonly clock: Clock;
  readonly log: Logger;
  /** Checks the bearer token, or the verified client certificate when there is one. */
  readonly authenticate: (
    authorization: string | undefined,
    peerCertificate?: PeerCertificate,
  ) => Promise<StreamIdentity>;
  /** Creates or updates the row of a node authenticated by its client certificate. */
  readonly recordCertifiedHello?: (
    hello: NodeHello,
    sessionId: string,
    now: Date,
    certificate: CertificateFacts,
  ) => Promise<{ created: boolean; refused?: true }>;
  /** Capabilities this Control offers. */
  readonly capabilities: readonly string[];
  /** Hello label keys believed (`enrollment.agentReportedLabels`; "*": all): see reported-labels.ts. */
  readonly agentReportedLabels: readonly string[];
  readonly heartbeatIntervalMs: number;
  readonly helloTimeoutMs: number;
  readonly sendQueueLength: number;
  readonly messagesPerSecond: number;
  /** Bytes one stream may send (see inbound-budget.ts); undefined: not limited. */
  readonly byteBudget?: ByteBudget;
  /** Told how each handshake ended (for `/metrics`): see {@link HandshakeResult}. */
  readonly handshaken?: (result: HandshakeResult) => void;
  /**
   * Told, by the stream's peer, when a handshake on a connection starts and ends and when its
   * credential was accepted: the listener bounds connections until then (see
   * unauthenticated-connections.ts). Unset where streams do not arrive on a listener.
   */
  readonly connection?: ConnectionAuthEvents;
  /**
   * Streams of nodes awaiting approval (pending-streams.ts), held from the Hello that shows the
   * node pending to the stream's end; unset: not bounded apart from `streams`.
   */
  readonly pendingStreams?: { readonly limit: number; tryAcquire(): boolean; release(): void };
  /**
   * New nodes enroll pending (`enrollment.requireApproval`): a join-token enrollment takes a
   * pending slot before it writes, and gives it back when the node turns out approved.
   */
  readonly newNodesPending?: boolean;
}

export type { HandshakeResult, StreamRefusal } from "./stream-bounds.js";

type Stage = "handshake" | "live" | "closed";

/**
 * Serves one Connect stream. Returns at once; the session lives until the stream ends.
 * Beyond `deps.streams` the stream is refused with RESOURCE_EXHAUSTED at once: no
 * credential is looked at and nothing touches the database, so a fleet larger than this
 * Control costs it one status per attempt while its agents back off.
 */
export function serveAgentStream(
  call: ServerDuplexStream<IncomingMessage, ControlMessage>,
  deps: SessionDeps,
): void {
  if (!admitStream(deps)) {
    call.emit("error", {
      code: status.RESOURCE_EXHAUSTED,
      details: "this Control holds as many agent streams as it allows: retry with backoff",
    });
    return;
  }
  new AgentSession(call, deps).start();
}

class AgentSession implements HubSession {
  readonly sessionId = randomUUID();
  node!: ConnectedNode;
  lastSeenMs: number;
  lastSeenWrittenMs = 0;
  private stage: Stage = "handshake";
  /** This stream holds a slot of `deps.pendingStreams`. */
  private pendingHeld = false;
  private readonly peer: string;
  private firstMessage: ((message: IncomingMessage | Error) => void) | undefined;
  private readonly writer: StreamWriter;
  private readonly inbound: InboundBudget;

  constructor(
    private readonly call: ServerDuplexStream<IncomingMessage, ControlMessage>,
    private readonly deps: SessionDeps,
  ) {
    this.lastSeenMs = deps.clock.now().getTime();
    this.peer = call.getPeer();
    this.inbound = new InboundBudget(deps.messagesPerSecond, deps.byteBudget, this.lastSeenMs);
    this.writer = new StreamWriter(call, deps.sendQueueLength, deps.clock, () =>
      this.close(status.RESOURCE_EXHAUSTED, "agent is not reading its stream: send queue full"),
    );
  }

  start(): void {
    this.call.on("data", (message: IncomingMessage) => this.onMessage(message));
    this.call.on("end", () => this.close(status.OK, "agent closed the stream"));
    this.call.on("cancelled", () => this.ended("stream cancelled by the agent"));
    this.call.on("close", () => this.ended("stream closed"));
    this.handshake().then(
      () => this.deps.handshaken?.(this.stage === "live" ? "welcomed" : "abandoned"),
      (error: unknown) => {
        const code = error instanceof ControlError ? error.code : "internal";
        this.deps.handshaken?.(this.stage === "closed" ? "abandoned" : code);
        this.fail(error);
      },
    );
  }

  send(operation: EncodedOperation): boolean {
    if (this.stage !== "live") return false;
    return this.writer.write(operationFrame(operation));
  }

  close(code: number, message: string): void {
    if (this.stage === "closed") return;
    const wasLive = this.stage === "live";
    this.stage = "closed";
    this.deps.streams.release();
    this.releasePending();
    this.abandonHandshake();
    this.writer.end(code, message);
    if (wasLive) this.deps.hub.unregister(this, message);
    this.logLine("debug", { code, reason: message }, "agent stream closed");
  }

  /**
   * Logs one line about this stream with its session id, peer and (once welcomed) node id.
   * No child logger per session: two pino children per stream cost about 1 KB of heap
   * and hidden classes of their own for the stream's whole life, for rare lines.
   */
  private logLine(
    level: "debug" | "info" | "error",
    fields: Readonly<Record<string, unknown>>,
    message: string,
  ): void {
    const log = this.deps.log;
    if (!log.isLevelEnabled(level)) return;
    const nodeId = (this.node as ConnectedNode | undefined)?.nodeId;
    const context = { sessionId: this.sessionId, peer: this.peer };
    log[level]({ ...context, ...(nodeId === undefined ? {} : { nodeId }), ...fields }, message);
  }

  private ended(reason: string): void {
    if (this.stage === "closed") return;
    const wasLive = this.stage === "live";
    this.stage = "closed";
    this.deps.streams.release();
    this.releasePending();
    this.abandonHandshake();
    this.writer.abandon();
    if (wasLive) this.deps.hub.unregister(this, reason);
  }

  /**
   * Takes a slot of `deps.pendingStreams` for this stream (once; a no-op without the bound).
   * @throws ControlError `resource_exhausted` when every slot is held.
   */
  private holdPending(): void {
    const slots = this.deps.pendingStreams;
    if (!slots || this.pendingHeld) return;
    if (!slots.tryAcquire()) {
      throw new ControlError("resource_exhausted", pendingStreamsRefusal(slots.limit));
    }
    this.pendingHeld = true;
  }

  /** Gives back this stream's slot of `deps.pendingStreams`, if it holds one; idempotent. */
  private releasePending(): void {
    if (!this.pendingHeld) return;
    this.pendingHeld = false;
    this.deps.pendingStreams?.release();
  }

  /** Releases a handshake still waiting for Hello on a stream that ended. */
  private abandonHandshake(): void {
    const pending = this.firstMessage;
    this.firstMessage = undefined;
    pending?.(new ControlError("unavailable", "stream ended before Hello"));
  }

  private fail(error: unknown): void {
    if (this.stage === "closed") return;
    if (!(error instanceof ControlError)) {
      this.logLine("error", { err: error }, "agent stream failed");
    }
    const { code, details } = toGrpcStatus(error);
    this.close(code, details);
  }

  private async handshake(): Promise<void> {
    const header = this.call.metadata.get("authorization")[0];
    const authorization = typeof header === "string" ? header : undefined;
    const certificate = this.call.getAuthContext()?.sslPeerCertificate;
    const connection = this.deps.connection;
    connection?.handshakeStarted(this.peer);
    try {
      const first = this.awaitFirstMessage();
      // Observed below once authentication succeeds; never left to reject unobserved.
      first.catch(() => undefined);
      const identity = await this.deps.authenticate(authorization, certificate);
      connection?.authenticated(this.peer);
      // Admitted only once the credential verified: one that does not holds no handshake slot,
      // of its own or of all (stream-bounds.ts).
      const release = admitHandshake(this.deps, identity);
      let welcomed = false;
      try {
        const message = await first;
        if (this.stage === "closed") return;
        if (MALFORMED in message) throw malformed(message[MALFORMED]);
        if (message.body.case !== "hello") {
          throw new ControlError("invalid_argument", "the first message must be Hello");
        }
        await this.welcome(identity, message.body.value);
        welcomed = true;
      } finally {
        release(welcomed);
      }
    } finally {
      connection?.handshakeEnded(this.peer);
    }
  }

  private awaitFirstMessage(): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const timer = scheduleOnce(this.deps.clock, this.deps.helloTimeoutMs, () => {
        reject(new ControlError("invalid_argument", "no Hello within the handshake timeout"));
      });
      this.firstMessage = (message) => {
        timer.cancel();
        if (message instanceof Error) reject(message);
        else resolve(message);
      };
    });
  }

  private async welcome(identity: StreamIdentity, hello: Hello): Promise<void> {
    const checked = checkHello(hello);
    if (!checked.ok) throw new ControlError("invalid_argument", checked.message);
    const { offered, enrollmentKey, ...facts } = checked.value;
    if (identity.kind !== "join" && identity.nodeId !== facts.nodeId) {
      const credential = identity.kind === "node" ? "node token" : "client certificate";
      throw new ControlError(
        "permission_denied",
        `this ${credential} belongs to node "${identity.nodeId}", not "${facts.nodeId}"`,
      );
    }
    const capabilities = this.deps.capabilities.filter((c) => offered.includes(c));
    const labels = reportedLabels(facts.labels, this.deps.agentReportedLabels);
    const nodeHello = { ...facts, labels, pool: labels.pool || "default", capabilities };
    const now = this.deps.clock.now();
    let nodeToken = "";
    if (identity.kind === "join") {
      const { joinTokenId, scope } = identity;
      // Before anything is written: a new node would be pending.
      if (this.deps.newNodesPending) this.holdPending();
      const enrolled = await enrollWithJoinToken(this.deps.nodes, {
        joinTokenId,
        scope,
        hello: nodeHello,
        enrollmentKey,
        sessionId: this.sessionId,
        peer: this.peer,
        now,
      }).catch((error: unknown) => {
        if (error instanceof ControlError) {
          const fields = { nodeId: facts.nodeId, joinTokenId, reason: error.message };
          this.logLine("info", fields, "join-token enrollment refused");
        }
        throw error;
      });
      nodeToken = enrolled.nodeToken;
      if (!enrolled.pending) this.releasePending();
      const { outcome, via } = enrolled;
      this.logLine(
        "info",
        { nodeId: facts.nodeId, joinTokenId, outcome, ...(via ? { via } : {}) },
        outcome === "created" ? "node enrolled" : "node re-enrolled",
      );
    } else if (identity.kind === "certificate" && this.deps.recordCertifiedHello) {
      const { created, refused } = await this.deps.recordCertifiedHello(
        nodeHello,
        this.sessionId,
        now,
        identity.certificate,
      );
      if (refused) {
        throw new ControlError(
          "permission_denied",
          `node "${facts.nodeId}" was revoked by an administrator: it enrolls again only after agentctl node reset ${facts.nodeId}`,
        );
      }
      if (created) {
        this.logLine("info", { nodeId: facts.nodeId }, "node enrolled by its certificate");
      }
    } else {
      if (identity.kind === "node" && identity.pending) this.holdPending();
      await this.deps.nodes.recordHello(nodeHello, this.sessionId, now);
    }
    if (this.stage === "closed") {
      this.releasePending();
      return;
    }
    this.node = { ...nodeHello, sessionId: this.sessionId, connectedAt: now };
    this.lastSeenMs = now.getTime();
    this.stage = "live";
    this.writer.write(
      create(ControlMessageSchema, {
        body: {
          case: "welcome",
          value: {
            sessionId: this.sessionId,
            capabilities,
            heartbeatInterval: durationFromMs(this.deps.heartbeatIntervalMs),
            nodeToken,
            nodeId: facts.nodeId,
          },
        },
      }),
    );
    this.deps.hub.register(this);
  }

  private onMessage(message: IncomingMessage): void {
    if (this.stage === "closed") return;
    const nowMs = this.deps.clock.now().getTime();
    const overBudget = this.inbound.admit(message, nowMs);
    if (overBudget !== undefined) {
      this.close(status.RESOURCE_EXHAUSTED, overBudget);
      return;
    }
    if (this.stage === "handshake") {
      const deliver = this.firstMessage;
      this.firstMessage = undefined;
      if (deliver) deliver(message);
      else this.close(status.INVALID_ARGUMENT, "send nothing after Hello until Welcome arrives");
      return;
    }
    if (MALFORMED in message) {
      const error = malformed(message[MALFORMED]);
      this.close(status.INVALID_ARGUMENT, error.message);
      return;
    }
    this.deps.hub.touch(this, nowMs);
    const body = message.body;
    switch (body.case) {
      case "heartbeat":
        return;
      case "observed": {
        const checked = checkObserved(body.value);
        if (!checked.ok) {
          this.close(status.INVALID_ARGUMENT, checked.message);
          return;
        }
        this.deps.hub.emit({
          kind: "observed",
          nodeId: this.node.nodeId,
          observed: honouredReport(checked.value, this.node.capabilities),
          at: new Date(nowMs),
        });
        return;
      }
      case "configStatus":
        this.deps.hub.emit({
          kind: "config_status",
          nodeId: this.node.nodeId,
          ok: body.value.ok,
          message: body.value.message.slice(0, 1024),
          at: new Date(nowMs),
        });
        return;
      case "trustStatus": {
        const checked = checkTrustStatus(body.value, new Date(nowMs));
        if (!checked.ok) {
          this.close(status.INVALID_ARGUMENT, checked.message);
          return;
        }
        this.deps.hub.emit({
          kind: "trust_status",
          nodeId: this.node.nodeId,
          ...checked.value,
          at: new Date(nowMs),
        });
        return;
      }
      case "hello":
        this.close(status.INVALID_ARGUMENT, "Hello may only be the first message");
        return;
      case undefined:
        this.close(status.INVALID_ARGUMENT, "empty AgentMessage");
        return;
    }
  }
}

function malformed(detail: string): ControlError {
  return new ControlError("invalid_argument", `malformed AgentMessage: ${detail}`);
}
