/**
 * A bare protocol client for tests that need to misbehave on purpose: it sends exactly the
 * messages (or raw bytes) a test gives it and records what comes back and how the stream
 * ended.
 */
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import {
  AgentControlService,
  AgentMessageSchema as AgentMessageDesc,
  type AgentMessageSchema,
  type ControlMessage,
  type HelloSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

type AgentMessageInit = MessageInitShape<typeof AgentMessageSchema>;

/** One open stream and what happened on it. */
export interface RawStream {
  readonly received: ControlMessage[];
  /** Resolves with the final status of the stream. */
  readonly ended: Promise<grpc.StatusObject>;
  send(message: AgentMessageInit): void;
  sendRaw(bytes: Uint8Array): void;
  /** Resolves with the next message received (or rejects if the stream ends first). */
  next(timeoutMs?: number): Promise<ControlMessage>;
  close(): void;
  /** Stops reading the stream (HTTP/2 flow control then stalls Control's writes). */
  pause(): void;
  channel: grpc.Client;
}

const definition = grpcServiceDefinition(AgentControlService);
const connect = definition.connect as grpc.MethodDefinition<unknown, ControlMessage>;
const rawDefinition: grpc.ServiceDefinition = {
  connect: {
    ...connect,
    requestSerialize: (value: unknown) =>
      value instanceof Uint8Array
        ? Buffer.from(value)
        : Buffer.from(toBinary(AgentMessageDesc, value as never)),
  },
};
const RawClient = grpc.makeGenericClientConstructor(rawDefinition, "AgentControlService");

/** Options of {@link openRawStream}. */
export interface RawStreamOptions {
  /** Channel credentials (default: clear text), e.g. `grpc.credentials.createSsl(ca, key, cert)`. */
  readonly credentials?: grpc.ChannelCredentials;
  /** More grpc-js channel options. */
  readonly channelOptions?: grpc.ChannelOptions;
}

/** Opens a stream to `address` with `authorization: Bearer <token>` (none when undefined). */
export function openRawStream(
  address: string,
  token: string | undefined,
  options: RawStreamOptions = {},
): RawStream {
  const client = new RawClient(address, options.credentials ?? grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 64 * 1024 * 1024,
    ...options.channelOptions,
  });
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set("authorization", `Bearer ${token}`);
  const call = (
    client as unknown as {
      connect(metadata: grpc.Metadata): grpc.ClientDuplexStream<unknown, ControlMessage>;
    }
  ).connect(metadata);
  const received: ControlMessage[] = [];
  const waiters: Array<{ resolve: (m: ControlMessage) => void; reject: (e: Error) => void }> = [];
  let finished: grpc.StatusObject | undefined;
  const ended = new Promise<grpc.StatusObject>((resolve) => {
    call.on("status", (status: grpc.StatusObject) => {
      finished = status;
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`stream ended: ${status.code} ${status.details}`));
      }
      resolve(status);
      client.close();
    });
  });
  call.on("error", () => {
    // The status event carries the detail.
  });
  call.on("data", (message: ControlMessage) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(message);
    else received.push(message);
  });
  return {
    received,
    ended,
    channel: client,
    send: (message) => call.write(create(AgentMessageDesc, message)),
    sendRaw: (bytes) => call.write(bytes),
    next(timeoutMs = 5000) {
      const queued = received.shift();
      if (queued) return Promise.resolve(queued);
      if (finished) return Promise.reject(new Error(`stream ended: ${finished.details}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no message within timeout")), timeoutMs);
        waiters.push({
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
      });
    },
    close: () => {
      call.end();
    },
    pause: () => {
      call.pause();
    },
  };
}

/** A valid Hello for `nodeId`, with overrides. */
export function hello(
  nodeId: string,
  overrides: Partial<MessageInitShape<typeof HelloSchema>> = {},
): AgentMessageInit {
  return {
    body: {
      case: "hello",
      value: {
        nodeId,
        agentVersion: "1.0.0",
        platform: "linux-amd64",
        bootId: `boot-${Math.random().toString(36).slice(2)}`,
        capabilities: ["upgrade.v1", "config.v1"],
        labels: {},
        ...overrides,
      } as MessageInitShape<typeof HelloSchema>,
    },
  };
}

/** Opens a stream, says Hello, and returns the stream with its Welcome. */
export async function connectAgent(
  address: string,
  token: string | undefined,
  nodeId: string,
  overrides: Partial<MessageInitShape<typeof HelloSchema>> = {},
  options: RawStreamOptions = {},
): Promise<{ stream: RawStream; welcome: ControlMessage }> {
  const stream = openRawStream(address, token, options);
  stream.send(hello(nodeId, overrides));
  const welcome = await stream.next();
  return { stream, welcome };
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export { create };
