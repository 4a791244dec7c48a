/**
 * A hostile Control for end-to-end tests: it speaks the Agent protocol (the same grpc-js
 * service definition), welcomes whoever connects (issuing node tokens to join-token
 * streams, negotiating upgrade.v1 and trust.v1), records every report and trust status, and
 * sends whatever operation a test forges. Beside it an
 * artifact server that serves bytes or trickles them, and records the headers it was sent.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import {
  AgentControlService,
  type AgentMessage,
  type ControlMessage,
  ControlMessageSchema,
  type Hello,
  type ObservedState,
  type Operation,
  type TrustStatus,
  WelcomeSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** One stream the hostile Control holds. */
interface Stream {
  hello: Hello | undefined;
  readonly call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>;
  ended: boolean;
}

/** The hostile Control's agent endpoint on 127.0.0.1. */
export class HostileControl {
  readonly streams: Stream[] = [];
  readonly observed: ObservedState[] = [];
  /** Every TrustStatus received, in order. */
  readonly trust: TrustStatus[] = [];
  /** Operations this Control sent (a test that never offers one can say so). */
  sent = 0;
  address = "";
  readonly #server = new grpc.Server();

  constructor(private readonly joinToken: string) {
    this.#server.addService(grpcServiceDefinition(AgentControlService), {
      connect: (call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>) => this.#onCall(call),
    });
  }

  async start(): Promise<this> {
    const port = await new Promise<number>((resolve, reject) => {
      this.#server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      );
    });
    this.address = `127.0.0.1:${port}`;
    return this;
  }

  stop(): void {
    this.#server.forceShutdown();
  }

  /** The open stream whose Hello came in last. */
  live(): Stream | undefined {
    return this.streams.filter((s) => !s.ended && s.hello !== undefined).at(-1);
  }

  /** Every report made for `opId`. */
  reports(opId: string): ObservedState[] {
    return this.observed.filter((o) => o.operationId === opId);
  }

  /** Ends the live stream from Control's side (the Agent reconnects). */
  dropLive(): void {
    const stream = this.live();
    if (stream === undefined) throw new Error("no agent is connected");
    stream.ended = true;
    stream.call.end();
  }

  /** Sends a forged `operation` on the live stream. */
  send(operation: Operation): void {
    const stream = this.live();
    if (stream === undefined) throw new Error("no agent is connected");
    stream.call.write(
      create(ControlMessageSchema, { body: { case: "operation", value: operation } }),
    );
    this.sent++;
  }

  #onCall(call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>): void {
    const stream: Stream = { hello: undefined, call, ended: false };
    this.streams.push(stream);
    const end = () => {
      stream.ended = true;
    };
    call.on("error", end);
    call.on("cancelled", end);
    call.on("end", () => {
      end();
      call.end();
    });
    const auth = call.metadata.get("authorization")[0];
    const joined = auth === `Bearer ${this.joinToken}`;
    call.on("data", (message: AgentMessage) => {
      if (message.body.case === "hello") {
        stream.hello = message.body.value;
        const offered = message.body.value.capabilities;
        const welcome = create(WelcomeSchema, {
          sessionId: randomUUID(),
          capabilities: ["upgrade.v1", "trust.v1"].filter((c) => offered.includes(c)),
          heartbeatInterval: durationFromMs(1000),
          nodeToken: joined ? `node-token-${randomUUID()}` : "",
        });
        call.write(create(ControlMessageSchema, { body: { case: "welcome", value: welcome } }));
      } else if (message.body.case === "observed") {
        this.observed.push(message.body.value);
      } else if (message.body.case === "trustStatus") {
        this.trust.push(message.body.value);
      }
    });
  }
}

/** How the artifact server answers one path. */
export type ArtifactRoute =
  | { kind: "bytes"; body: Uint8Array }
  | { kind: "trickle"; body: Uint8Array; chunk: number; everyMs: number };

/** Serves artifacts on 127.0.0.1 and records each request's path and headers. */
export class HostileArtifacts {
  readonly routes = new Map<string, ArtifactRoute>();
  readonly requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  base = "";
  #server: Server | undefined;

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      const path = req.url ?? "/";
      this.requests.push({ path, headers: req.headers });
      const route = this.routes.get(path);
      if (route === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-length": route.body.byteLength });
      if (route.kind === "bytes") {
        res.end(route.body);
        return;
      }
      let sent = 0;
      const next = () => {
        if (res.destroyed) return;
        res.write(route.body.subarray(sent, sent + route.chunk));
        sent += route.chunk;
        if (sent >= route.body.byteLength) res.end();
        else setTimeout(next, route.everyMs);
      };
      next();
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}
