/**
 * A tiny stand-in for Control's agent endpoint, built from the same grpc-js service
 * definition: join-token enrollment issuing node tokens, node-token authentication,
 * Welcome with a heartbeat interval, and a record of everything each stream carried.
 */
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { grpcServiceDefinition } from "../../../control/shared/grpc-service.js";
import {
  AgentControlService,
  type AgentMessage,
  type ConfigStatus,
  type ControlMessage,
  ControlMessageSchema,
  type Hello,
  type ObservedState,
  type Operation,
  WelcomeSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** One stream as the fake Control saw it. */
export interface FakeSession {
  readonly id: string;
  readonly token: string;
  hello: Hello | undefined;
  /** Set when the stream was welcomed (and so authenticated). */
  welcomedAt: number | undefined;
  issuedToken: string | undefined;
  heartbeats: number[];
  observed: ObservedState[];
  configStatuses: ConfigStatus[];
  readonly openedAt: number;
  endedAt: number | undefined;
  readonly call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>;
}

/** Options of the fake Control. */
export interface FakeControlOptions {
  joinToken?: string;
  heartbeatMs?: number;
  capabilities?: readonly string[];
  /** When false, Control never answers Hello. */
  welcome?: boolean;
}

/** The fake Control server. */
export class FakeControl {
  readonly sessions: FakeSession[] = [];
  /** node token → node id */
  readonly nodeTokens = new Map<string, string>();
  /** Streams refused (status code per attempt). */
  readonly refusals: { token: string; code: grpc.status; at: number }[] = [];
  address = "";
  readonly #server = new grpc.Server();
  readonly #options: Required<FakeControlOptions>;

  constructor(options: FakeControlOptions = {}) {
    this.#options = {
      joinToken: options.joinToken ?? "join-secret",
      heartbeatMs: options.heartbeatMs ?? 200,
      capabilities: options.capabilities ?? ["upgrade.v1", "config.v1", "defer.v1"],
      welcome: options.welcome ?? true,
    };
    this.#server.addService(grpcServiceDefinition(AgentControlService), {
      connect: (call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>) => this.#onCall(call),
    });
  }

  /** Binds 127.0.0.1:0 and starts serving. */
  async start(): Promise<this> {
    const port = await new Promise<number>((resolve, reject) => {
      this.#server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      );
    });
    this.address = `127.0.0.1:${port}`;
    return this;
  }

  /** Stops at once, ending every stream. */
  async stop(): Promise<void> {
    this.#server.forceShutdown();
  }

  /** Streams of `nodeId`, oldest first. */
  sessionsOf(nodeId: string): FakeSession[] {
    return this.sessions.filter((s) => s.hello?.nodeId === nodeId);
  }

  /** The open, welcomed stream of `nodeId`, if any. */
  live(nodeId: string): FakeSession | undefined {
    return this.sessionsOf(nodeId).find(
      (s) => s.welcomedAt !== undefined && s.endedAt === undefined,
    );
  }

  /** Every ObservedState `nodeId` reported for `opId`, over all its streams. */
  reports(nodeId: string, opId: string): ObservedState[] {
    return this.sessionsOf(nodeId).flatMap((s) => s.observed.filter((o) => o.operationId === opId));
  }

  /** Sends `operation` on the live stream of `nodeId`; throws when it has none. */
  send(nodeId: string, operation: Operation): void {
    const session = this.live(nodeId);
    if (session === undefined) throw new Error(`${nodeId} has no live stream`);
    session.call.write(
      create(ControlMessageSchema, { body: { case: "operation", value: operation } }),
    );
  }

  /** Ends the live stream of `nodeId` with `code`. */
  end(nodeId: string, code: grpc.status, details = "ended by the test"): void {
    const session = this.live(nodeId);
    if (session === undefined) throw new Error(`${nodeId} has no live stream`);
    session.call.emit("error", { code, details });
  }

  /** Revokes every node token of `nodeId`. */
  revoke(nodeId: string): void {
    for (const [token, owner] of this.nodeTokens)
      if (owner === nodeId) this.nodeTokens.delete(token);
  }

  #onCall(call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>): void {
    const auth = call.metadata.get("authorization")[0];
    const token = typeof auth === "string" ? auth.replace(/^Bearer /, "") : "";
    const session: FakeSession = {
      id: randomUUID(),
      token,
      hello: undefined,
      welcomedAt: undefined,
      issuedToken: undefined,
      heartbeats: [],
      observed: [],
      configStatuses: [],
      openedAt: Date.now(),
      endedAt: undefined,
      call,
    };
    this.sessions.push(session);
    const finish = () => {
      session.endedAt ??= Date.now();
    };
    call.on("error", finish);
    call.on("close", finish);
    call.on("end", () => {
      finish();
      call.end();
    });
    call.on("cancelled", finish);
    call.on("data", (message: AgentMessage) => {
      switch (message.body.case) {
        case "hello":
          this.#onHello(session, message.body.value);
          break;
        case "heartbeat":
          session.heartbeats.push(Date.now());
          break;
        case "observed":
          session.observed.push(message.body.value);
          break;
        case "configStatus":
          session.configStatuses.push(message.body.value);
          break;
        default:
          break;
      }
    });
  }

  #onHello(session: FakeSession, hello: Hello): void {
    session.hello = hello;
    if (!this.#options.welcome) return;
    const owner = this.nodeTokens.get(session.token);
    let issued = "";
    if (session.token === this.#options.joinToken) {
      issued = `node-${hello.nodeId}-${randomUUID()}`;
      this.nodeTokens.set(issued, hello.nodeId);
    } else if (owner !== hello.nodeId) {
      this.refusals.push({
        token: session.token,
        code: grpc.status.UNAUTHENTICATED,
        at: Date.now(),
      });
      session.call.emit("error", { code: grpc.status.UNAUTHENTICATED, details: "bad token" });
      return;
    }
    session.issuedToken = issued || undefined;
    session.welcomedAt = Date.now();
    const welcome = create(WelcomeSchema, {
      sessionId: session.id,
      capabilities: hello.capabilities.filter((c) => this.#options.capabilities.includes(c)),
      heartbeatInterval: durationFromMs(this.#options.heartbeatMs),
      nodeToken: issued,
      nodeId: hello.nodeId,
    });
    session.call.write(create(ControlMessageSchema, { body: { case: "welcome", value: welcome } }));
  }
}
