/**
 * A simulated agent's end of one stream to Control, as a real Agent keeps it: Hello first,
 * heartbeats at the interval the Welcome names, reports as they happen, operations handed to
 * the agent as they arrive; nothing is sent once the stream ended or the agent hangs.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { durationMs } from "@bufbuild/protobuf/wkt";
import type { ManualClock } from "../control/manual-clock.js";
import {
  type AgentMessage,
  AgentMessageSchema,
  type ControlMessage,
  type Operation,
} from "../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { MemoryAgentCall } from "./memory-agent-call.js";
import type { SimStreams } from "./sim-streams.js";

/** What an agent message carries. */
export type AgentBody = NonNullable<MessageInitShape<typeof AgentMessageSchema>["body"]>;

/** What the agent is told of its stream. */
export interface AgentStreamHandlers {
  /** Welcomed and registered in Control's hub. */
  readonly welcomed: () => void;
  /** An operation arrived. */
  readonly operation: (operation: Operation) => void;
  /** Control ended the stream (not called when the agent dropped it itself). */
  readonly ended: () => void;
}

/** The heartbeat interval when the Welcome names none. */
const DEFAULT_HEARTBEAT_MS = 10_000;

/** One open (or ended) stream of a simulated agent. */
export class AgentStream {
  private readonly call: MemoryAgentCall;
  private dropped = false;
  private hung = false;

  /** Opens the stream with `hello`; the handshake completes on the handshake's promises. */
  constructor(
    streams: SimStreams,
    private readonly clock: ManualClock,
    nodeId: string,
    hello: AgentMessage,
    private readonly handlers: AgentStreamHandlers,
  ) {
    this.call = streams.open(nodeId, hello, {
      onMessage: (message) => this.fromControl(message),
      onStatus: () => {
        if (!this.dropped) handlers.ended();
      },
    });
  }

  /** True while Control may still hear this agent on it. */
  get open(): boolean {
    return this.call.open && !this.dropped && !this.hung;
  }

  /** Sends one message; nothing once the stream ended or the agent hangs. */
  send(body: AgentBody): void {
    if (this.open) this.call.send(create(AgentMessageSchema, { body }));
  }

  /** The agent drops the stream (a restart, a lost connection): Control sees it cancelled. */
  drop(): void {
    if (this.dropped) return;
    this.dropped = true;
    this.call.cancel();
  }

  /** The agent hangs: the stream stays open and silent until Control ends it. */
  hang(): void {
    this.hung = true;
  }

  private fromControl(message: ControlMessage): void {
    const body = message.body;
    if (body.case === "welcome") {
      const interval = body.value.heartbeatInterval;
      this.heartbeat(interval ? durationMs(interval) : DEFAULT_HEARTBEAT_MS);
      // The hub registers the stream right after it wrote the Welcome.
      queueMicrotask(() => {
        if (this.open) this.handlers.welcomed();
      });
      return;
    }
    if (body.case === "operation" && !this.hung) this.handlers.operation(body.value);
  }

  private heartbeat(ms: number): void {
    void this.clock.sleep(ms).then(() => {
      if (!this.open) return;
      this.send({ case: "heartbeat", value: {} });
      this.heartbeat(ms);
    });
  }
}
