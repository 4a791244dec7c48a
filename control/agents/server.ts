/**
 * The Agent Control gRPC server: `agentcontrol.v1.AgentControlService/Connect` on
 * grpc-js, with the channel options chosen for tens of thousands of long-lived streams.
 * Its TCP socket is Control's own ({@link listenCapped}), so connections are capped below
 * the open-file limit, and a connection without an authenticated stream is bounded in time
 * and per source address; grpc-js serves what that socket accepts.
 */
import type { Socket } from "node:net";
import { fromBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  AgentControlService,
  AgentMessageSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { type ClockTimer, scheduleOnce } from "../clock-timer.js";
import type { Logger } from "../log.js";
import { grpcServiceDefinition } from "../shared/grpc-service.js";
import type { ListenAddress } from "../shared/listen-address.js";
import { nulTextPath } from "../shared/nul-text.js";
import { listenCapped } from "./connection-cap.js";
import { withWireBytes } from "./inbound-budget.js";
import { type IncomingMessage, MALFORMED, type SessionDeps, serveAgentStream } from "./session.js";
import type { UnauthenticatedConnections } from "./unauthenticated-connections.js";

/** Options of {@link startAgentServer}. */
export interface AgentServerOptions {
  readonly address: ListenAddress;
  readonly maxMessageBytes: number;
  /** Largest message accepted from an Agent (`limits.maxAgentMessageBytes`); default the above. */
  readonly maxAgentMessageBytes?: number;
  readonly credentials?: grpc.ServerCredentials;
  readonly session: SessionDeps;
  /** TCP connections held at once; the next is closed at accept (see stream-budget.ts). */
  readonly maxConnections: number;
  /** Told of each connection closed at accept because `maxConnections` were open. */
  readonly connectionDropped: () => void;
  /**
   * The bounds on connections without an authenticated stream (deadline, per source); the
   * sessions tell it when a stream on a connection handshakes and authenticates.
   */
  readonly unauthenticated: UnauthenticatedConnections;
  readonly log: Logger;
}

/** A listening agent server. */
export interface AgentServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /** TCP connections open on the agent listener now. */
  readonly connections: number;
  /**
   * Stops accepting streams, asks every open stream to end (UNAVAILABLE: agents reconnect
   * with backoff), and waits up to `graceMs` (of the session clock) for them to close
   * before forcing.
   */
  drain(graceMs: number): Promise<void>;
}

/**
 * grpc-js options, each chosen deliberately:
 * - message size limits bound memory per message (RESOURCE_EXHAUSTED beyond them);
 * - keepalive pings detect half-open connections even when an Agent's heartbeats stop;
 * - channelz off: it keeps per-call bookkeeping we never read;
 * - one stream per connection is all an Agent needs; a few more allow overlap on reconnect;
 * - a connection without a stream for a minute is closed (GOAWAY): a client refused for
 *   `limits.maxStreams` that keeps its channel, or one that never opens a stream, does not
 *   hold a file descriptor while it waits.
 */
export function agentServerOptions(
  maxMessageBytes: number,
  maxAgentMessageBytes: number = maxMessageBytes,
): grpc.ServerOptions {
  return {
    // An oversized message ends its stream with RESOURCE_EXHAUSTED, "Received message larger
    // than max (N vs. LIMIT)", before it is decoded.
    "grpc.max_receive_message_length": Math.min(maxAgentMessageBytes, maxMessageBytes),
    "grpc.max_send_message_length": maxMessageBytes,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
    "grpc.keepalive_permit_without_calls": 1,
    "grpc.http2.min_ping_interval_without_data_ms": 10_000,
    "grpc.enable_channelz": 0,
    "grpc.max_concurrent_streams": 8,
    "grpc.max_connection_idle_ms": 60_000,
  };
}

/**
 * Decodes one AgentMessage frame as the server does. Never throws: bytes that do not decode,
 * or a message with U+0000 in a string (which no database column can hold), become the
 * {@link MALFORMED} marker, which ends the stream with INVALID_ARGUMENT. Either is marked
 * with its size on the wire, which the stream's byte budget is charged.
 */
export function decodeAgentMessage(bytes: Uint8Array): IncomingMessage {
  return withWireBytes(decodeFrame(bytes), bytes.byteLength);
}

function decodeFrame(bytes: Uint8Array): IncomingMessage {
  try {
    const message = fromBinary(AgentMessageSchema, bytes);
    const nul = nulTextPath(message.body.value);
    if (nul) return { [MALFORMED]: `${nul} contains a NUL character (U+0000)` };
    return message;
  } catch (error) {
    return { [MALFORMED]: String((error as Error)?.message ?? error).slice(0, 200) };
  }
}

/** Binds the agent server and starts serving. */
export async function startAgentServer(options: AgentServerOptions): Promise<AgentServer> {
  const server = new grpc.Server(
    agentServerOptions(options.maxMessageBytes, options.maxAgentMessageBytes),
  );
  const definition = grpcServiceDefinition(AgentControlService);
  const connect = definition.connect as grpc.MethodDefinition<IncomingMessage, unknown>;
  // Decode here so a malformed message ends its stream with a status that says so,
  // instead of grpc-js's generic INTERNAL.
  const tolerant: grpc.ServiceDefinition = {
    connect: {
      ...connect,
      requestDeserialize: decodeAgentMessage,
    },
  };
  const session: SessionDeps = { ...options.session, connection: options.unauthenticated };
  server.addService(tolerant, {
    connect: (call: grpc.ServerDuplexStream<IncomingMessage, never>) =>
      serveAgentStream(call, session),
  });
  const injector = server.createConnectionInjector(
    options.credentials ?? grpc.ServerCredentials.createInsecure(),
  );
  const listener = await listenCapped({
    address: options.address,
    maxConnections: options.maxConnections,
    accept: (socket: Socket) => injector.injectConnection(socket),
    dropped: options.connectionDropped,
    unauthenticated: options.unauthenticated,
    log: options.log,
  });
  return {
    port: listener.port,
    get connections() {
      return listener.connections;
    },
    async drain(graceMs) {
      const { hub, clock } = options.session;
      const unbound = listener.close();
      const closed = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      hub.closeAll(grpc.status.UNAVAILABLE, "Control is shutting down: reconnect with backoff");
      let grace: ClockTimer | undefined;
      const timer = new Promise<"timeout">((resolve) => {
        grace = scheduleOnce(clock, graceMs, () => resolve("timeout"));
      });
      const outcome = await Promise.race([Promise.all([closed, unbound]), timer]);
      grace?.cancel();
      if (outcome === "timeout") {
        server.forceShutdown();
        listener.destroyAll();
      }
    },
  };
}
