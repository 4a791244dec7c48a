/**
 * The benchmark's baseline: a bare grpc-js server of `agentcontrol.v1.AgentControlService`
 * on the same grpc-js version, the same service definition (protobuf-es codecs) and the
 * same server options as Control's agent server. It answers Hello with a Welcome and
 * reads (decodes) every later message without doing anything with it: no authentication,
 * no database, no per-stream state beyond grpc-js's own. Whatever Control costs above it
 * is what Control adds.
 *
 * Usage: `tsx agent-sim/bench/echo-server.ts --addr 127.0.0.1:0 --heartbeat-ms 10000`;
 * prints `listening <port>` once bound; SIGTERM stops it.
 */
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { agentServerOptions } from "../../control/agents/server.js";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import {
  AgentControlService,
  type AgentMessage,
  type ControlMessage,
  ControlMessageSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const { values } = parseArgs({
  options: {
    addr: { type: "string", default: "127.0.0.1:0" },
    "heartbeat-ms": { type: "string", default: "10000" },
  },
  strict: true,
});
const heartbeatMs = Number(values["heartbeat-ms"]);
let sessions = 0;

const server = new grpc.Server(agentServerOptions(4 * 1024 * 1024));
server.addService(grpcServiceDefinition(AgentControlService), {
  connect(call: grpc.ServerDuplexStream<AgentMessage, ControlMessage>) {
    call.on("data", (message: AgentMessage) => {
      if (message.body.case !== "hello") return;
      sessions += 1;
      const hello = message.body.value;
      call.write(
        create(ControlMessageSchema, {
          body: {
            case: "welcome",
            value: {
              sessionId: `s${sessions}`,
              capabilities: hello.capabilities,
              heartbeatInterval: durationFromMs(heartbeatMs),
              nodeId: hello.nodeId,
            },
          },
        }),
      );
    });
    call.on("end", () => call.end());
    call.on("error", () => undefined);
  },
});
server.bindAsync(values.addr, grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    process.stderr.write(`echo-server: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening ${port}\n`);
});
process.once("SIGTERM", () => {
  server.forceShutdown();
  process.exit(0);
});
