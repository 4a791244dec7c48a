/**
 * One stream: opens the bidi `Connect` call on the agent's own channel, sends Hello,
 * hands every ControlMessage to the agent, and resolves when the call ends, with the
 * status Control ended it with. Never rejects.
 */
import * as grpc from "@grpc/grpc-js";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import {
  AgentControlService,
  type AgentMessage,
  type ControlMessage,
  type Operation,
  type Welcome,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { serverNameOptions } from "./tls.js";

/** The typed client of the Agent Control service. */
export interface AgentControlClient extends grpc.Client {
  connect(metadata: grpc.Metadata): grpc.ClientDuplexStream<AgentMessage, ControlMessage>;
}

/** Constructor of {@link AgentControlClient}s (one channel each). */
export type AgentControlClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => AgentControlClient;

/** The client constructor built from the shared service definition. */
export const AgentControlClientImpl = grpc.makeGenericClientConstructor(
  grpcServiceDefinition(AgentControlService),
  "AgentControlService",
) as unknown as AgentControlClientConstructor;

/** Channel options that keep each agent on its own HTTP/2 connection. */
export const AGENT_CHANNEL_OPTIONS: grpc.ChannelOptions = Object.freeze({
  "grpc.use_local_subchannel_pool": 1,
  // Channelz keeps per-channel trace objects: 10 000 agents do not need them.
  "grpc.enable_channelz": 0,
  "grpc.enable_retries": 0,
  "grpc.max_send_message_length": 4 * 1024 * 1024,
});

/** What the session needs from its agent. */
export interface SessionHost {
  /** The Hello to open with. */
  hello(): AgentMessage;
  /** Called once the call exists, with a writer for later messages. */
  opened(write: (message: AgentMessage) => void): void;
  onWelcome(welcome: Welcome): void;
  onOperation(operation: Operation): void;
  /** Called once when the call has ended, before the session resolves. */
  closed(): void;
}

/** How a stream ended. */
export interface SessionEnd {
  /** The gRPC status the call ended with. */
  code: grpc.status;
  details: string;
  /** How long the stream was open, in ms. */
  openMs: number;
  /** The stream authenticated with a node token (not the join token). */
  usedNodeToken: boolean;
}

/**
 * How to close a stream on abort: `cancel` drops it at once (a network failure); `end`
 * half-closes so messages already written reach Control, then cancels after `graceMs`.
 */
export type CloseMode = "cancel" | "end";

/** Options of one session. */
export interface SessionOptions {
  server: string;
  /** The bearer credential. */
  token: string;
  /** `token` is a node token (so a rejection means the enrollment is gone). */
  usedNodeToken: boolean;
  clientConstructor: AgentControlClientConstructor;
  channelOptions: grpc.ChannelOptions;
  /** TLS or mTLS credentials of the channel (default: clear text). */
  credentials?: grpc.ChannelCredentials;
  /** Grace for `end` closes before the call is cancelled. */
  graceMs: number;
  /** A stream not welcomed within this many ms is cancelled (and retried with backoff). */
  welcomeTimeoutMs: number;
  /** Aborting ends the stream; `signal.reason` may be a {@link CloseMode} (default cancel). */
  signal: AbortSignal;
}

/** Runs one stream until it ends; its channel is closed before this resolves. */
export async function runSession(host: SessionHost, options: SessionOptions): Promise<SessionEnd> {
  const started = Date.now();
  const client = new options.clientConstructor(
    grpcTarget(options.server),
    options.credentials ?? grpc.credentials.createInsecure(),
    // An IP address never goes into the TLS server name (RFC 6066; Node.js warns on stderr).
    { ...options.channelOptions, ...serverNameOptions(options.server) },
  );
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${options.token}`);
  try {
    const call = client.connect(metadata);
    const ended = new Promise<grpc.StatusObject>((resolve) => {
      call.on("status", resolve);
    });
    call.on("error", () => {}); // the status event carries the outcome
    const welcomeTimer = setTimeout(() => call.cancel(), options.welcomeTimeoutMs);
    void ended.then(() => clearTimeout(welcomeTimer));
    call.on("data", (message: ControlMessage) => {
      switch (message.body.case) {
        case "welcome":
          clearTimeout(welcomeTimer);
          host.onWelcome(message.body.value);
          break;
        case "operation":
          host.onOperation(message.body.value);
          break;
        default:
          break; // a newer Control's message: ignored
      }
    });
    let open = true;
    const write = (message: AgentMessage) => {
      if (open) call.write(message);
    };
    call.write(host.hello());
    host.opened(write);
    const onAbort = () => {
      open = false;
      if (options.signal.reason === "end") {
        call.end();
        const timer = setTimeout(() => call.cancel(), options.graceMs);
        void ended.then(() => clearTimeout(timer));
      } else {
        call.cancel();
      }
    };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });
    const status = await ended;
    open = false;
    options.signal.removeEventListener("abort", onAbort);
    host.closed();
    return {
      code: status.code,
      details: status.details,
      openMs: Date.now() - started,
      usedNodeToken: options.usedNodeToken,
    };
  } finally {
    client.close();
  }
}

/**
 * The grpc-js target for `HOST:PORT`: IP literals use the `ipv4:`/`ipv6:` resolvers, so
 * ten thousand channels do not each set up a DNS resolver; host names resolve via DNS.
 */
export function grpcTarget(server: string): string {
  if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(server)) return `ipv4:${server}`;
  if (/^\[[0-9a-fA-F:.]+\]:\d+$/.test(server)) return `ipv6:${server}`;
  return server;
}
