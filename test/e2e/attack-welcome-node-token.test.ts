/**
 * Attack: one hostile Welcome bricked the real Agent. Something answering once on Control's
 * address welcomed the enrolling Agent with the node token "ant.evil\nX-Injected: 1"; the
 * Agent saved it to state.json, and every later start died setting it as `authorization`
 * ("illegal characters").
 *
 * Expected: a node token that is no header value is refused at Welcome and never saved; the
 * Agent keeps connecting with its join token to whatever answers next.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import { generateKeyPair } from "../../control/shared/release/index.js";
import {
  AgentControlService,
  type AgentMessage,
  type ControlMessage,
  ControlMessageSchema,
  WelcomeSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { buildAgent, eventually, type RunningAgent, startAgent } from "./agent-fixture.js";

describe("a Welcome whose node token is no header value", () => {
  const server = new grpc.Server();
  const tokens: string[] = [];
  let dir = "";
  let install = "";
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    server.addService(grpcServiceDefinition(AgentControlService), {
      connect: (call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>) => {
        call.on("error", () => {});
        tokens.push(String(call.metadata.get("authorization")[0] ?? ""));
        call.on("data", (m: AgentMessage) => {
          if (m.body.case !== "hello") return;
          const first = tokens.length === 1;
          const welcome = create(WelcomeSchema, {
            sessionId: randomUUID(),
            capabilities: ["upgrade.v1"],
            heartbeatInterval: { seconds: 1n, nanos: 0 },
            // Only the first Welcome is hostile; afterwards an honest server that hands no token.
            nodeToken: first ? "ant.evil\nX-Injected: 1" : "",
          });
          call.write(create(ControlMessageSchema, { body: { case: "welcome", value: welcome } }));
          if (first) setTimeout(() => call.end(), 300);
        });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    dir = await mkdtemp(join(tmpdir(), "attack-welcome-token-"));
    install = join(dir, "install");
    const artifact = join(dir, "agent-1.0.0.mjs");
    await buildAgent("1.0.0", artifact);
    const key = await generateKeyPair();
    // biome-ignore format: flag pairs
    agent = startAgent(artifact, install, [
      "--server", `127.0.0.1:${port}`, "--join-token", "j", "--node-id", "welcome-token-victim",
      "--platform", "linux-amd64", "--pins", key.pin, "--threshold", "1",
    ]);
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    server.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it("is refused, never saved, and the Agent connects again with its join token", async () => {
    await eventually(
      async () => (tokens.length >= 2 ? true : undefined),
      "a second connect",
      30_000,
    );
    expect(tokens.slice(0, 2)).toEqual(["Bearer j", "Bearer j"]);
    const state = JSON.parse(await readFile(join(install, "state.json"), "utf8"));
    expect(state.nodeToken).toBeUndefined();
    expect(agent?.logs()).toContain("refusing the Welcome's node token");
    expect(agent?.logs()).not.toContain("illegal characters");
  });
});
