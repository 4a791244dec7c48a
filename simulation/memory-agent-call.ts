/**
 * One agent stream in memory: the part of a grpc-js `ServerDuplexStream` that
 * `serveAgentStream` uses (events `data`, `end`, `cancelled`, `close`, `drain`; `write`,
 * `end`, `emit("error", status)`, `metadata`, `getPeer`, `getAuthContext`), and the agent's
 * end of it. The real `AgentSession` and `AgentHub` run over it unchanged, so heartbeats,
 * offline judgement, stream replacement and back-pressure are production's, in virtual time.
 *
 * Nothing here keeps time or queues work: a message written by either side is handed over
 * at once, in order; latency, if any, is the caller's.
 */
import { EventEmitter } from "node:events";
import { fromBinary } from "@bufbuild/protobuf";
import { Metadata, type ServerDuplexStream, status } from "@grpc/grpc-js";
import type { IncomingMessage } from "../control/agents/session.js";
import { WireMessage } from "../control/shared/wire-message.js";
import {
  type AgentMessage,
  type ControlMessage,
  ControlMessageSchema,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** How a stream ended, as the agent sees it. */
export interface StreamStatus {
  /** The gRPC status code (`OK` for a normal end). */
  readonly code: number;
  readonly details: string;
}

/** Options of a {@link MemoryAgentCall}. */
export interface MemoryAgentCallOptions {
  /** The `authorization` metadata the agent sends (for example `Bearer <node token>`). */
  readonly authorization?: string;
  /** What `getPeer()` answers (default `memory:agent`). */
  readonly peer?: string;
  /** Told of every message Control writes, decoded, in order. */
  readonly onMessage?: (message: ControlMessage) => void;
  /** Told once when the stream ends, with the status the agent receives. */
  readonly onStatus?: (status: StreamStatus) => void;
}

/**
 * An in-memory agent stream. Control's side is {@link MemoryAgentCall.serverCall}; the
 * agent's side is {@link MemoryAgentCall.send}, {@link MemoryAgentCall.hangUp},
 * {@link MemoryAgentCall.cancel} and {@link MemoryAgentCall.stopReading}/
 * {@link MemoryAgentCall.resumeReading}. After the stream ended nothing more crosses it.
 */
export class MemoryAgentCall extends EventEmitter {
  /** The messages Control wrote, decoded, in order. */
  readonly received: ControlMessage[] = [];
  /** The agent's metadata, as grpc-js hands it to a server call. */
  readonly metadata = new Metadata();
  private readonly peer: string;
  private reading = true;
  private readonly unread: ControlMessage[] = [];
  private ended: StreamStatus | undefined;

  constructor(private readonly options: MemoryAgentCallOptions = {}) {
    super();
    this.peer = options.peer ?? "memory:agent";
    if (options.authorization !== undefined) {
      this.metadata.set("authorization", options.authorization);
    }
    // The session ends a stream with a status by emitting "error" on the call (grpc-js sends
    // it as the trailers); the agent receives it and the stream is over.
    this.on("error", (error: { code?: number; details?: string }) =>
      this.finish({ code: error.code ?? status.UNKNOWN, details: error.details ?? "" }),
    );
  }

  /** The grpc-js server call the session serves; only the surface above is real. */
  get serverCall(): ServerDuplexStream<IncomingMessage, ControlMessage> {
    return this as unknown as ServerDuplexStream<IncomingMessage, ControlMessage>;
  }

  /** The status the stream ended with, once it ended. */
  get status(): StreamStatus | undefined {
    return this.ended;
  }

  /** True until the stream ended. */
  get open(): boolean {
    return this.ended === undefined;
  }

  // Control's side (what grpc-js offers the session).

  getPeer(): string {
    return this.peer;
  }

  /** No TLS in memory: no peer certificate. */
  getAuthContext(): Record<string, never> {
    return {};
  }

  /**
   * Control writes one message; false (grpc-js's back-pressure) while the agent does not
   * read, with `drain` emitted once it reads again.
   */
  write(message: ControlMessage | WireMessage): boolean {
    if (this.ended) return false;
    const decoded =
      message instanceof WireMessage ? fromBinary(ControlMessageSchema, message.bytes) : message;
    if (!this.reading) {
      this.unread.push(decoded);
      return false;
    }
    this.handOver(decoded);
    return true;
  }

  /** Control ends the stream normally (status OK). */
  end(): this {
    this.finish({ code: status.OK, details: "" });
    return this;
  }

  // The agent's side.

  /** The agent sends one message (as the server's decoder delivers it). */
  send(message: AgentMessage | IncomingMessage): void {
    if (this.ended) throw new Error("the stream has ended: nothing more can be sent on it");
    this.emit("data", message);
  }

  /** The agent half-closes its side, as a client calling `end()` does. */
  hangUp(): void {
    if (this.ended) return;
    this.emit("end");
  }

  /** The agent cancels the call (or its connection is lost): CANCELLED, then closed. */
  cancel(): void {
    if (this.ended) return;
    this.ended = { code: status.CANCELLED, details: "cancelled by the agent" };
    this.emit("cancelled");
    this.emit("close");
    this.options.onStatus?.(this.ended);
  }

  /** The agent stops reading: Control's writes queue up and report back-pressure. */
  stopReading(): void {
    this.reading = false;
  }

  /** The agent reads again: what waited is handed over and Control is told `drain`. */
  resumeReading(): void {
    this.reading = true;
    for (const message of this.unread.splice(0)) this.handOver(message);
    if (!this.ended) this.emit("drain");
  }

  private handOver(message: ControlMessage): void {
    this.received.push(message);
    this.options.onMessage?.(message);
  }

  private finish(ended: StreamStatus): void {
    if (this.ended) return;
    this.ended = ended;
    this.unread.length = 0;
    this.options.onStatus?.(ended);
    this.emit("close");
  }
}
