/**
 * The benchmark's baseline: a bare grpc-js server of `agentcontrol.v1.AgentControlService`
 * on the same grpc-js version, the same service definition (protobuf-es codecs) and the
 * same server options as Control's agent server. It answers Hello with a Welcome and
 * reads (decodes) every later message without doing anything with it: no authentication,
 * no database, no per-stream state beyond grpc-js's own. Whatever Control costs above it
 * is what Control adds.
 *
 * With `--offer FILE` (an encoded `ControlMessage`, `bare-fanout.ts`) it also keeps the
 * streams that sent a Hello in a set (an entry and a `close` listener each: about 80 B of the
 * 10 KB of heap a stream costs it, measured with 3,000 streams), and a line `fanout N` on stdin writes that message to N of them, spread evenly in
 * the order they arrived, all in one synchronous loop, then prints `fanout <epoch ms of the
 * first write> <written> <ms the loop took>`: the fan-out's baseline.
 *
 * Usage: `tsx agent-sim/bench/echo-server.ts --addr 127.0.0.1:0 --heartbeat-ms 10000 [--offer FILE]`;
 * prints `listening <port>` once bound; SIGTERM stops it.
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { agentServerOptions } from "../../control/agents/server.js";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import { WireMessage } from "../../control/shared/wire-message.js";
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
    offer: { type: "string" },
  },
  strict: true,
});
const heartbeatMs = Number(values["heartbeat-ms"]);
let sessions = 0;
/** With `--offer`, the streams that sent a Hello, in the order they did (ended ones removed). */
const welcomed = new Set<grpc.ServerDuplexStream<AgentMessage, ControlMessage | WireMessage>>();

const server = new grpc.Server(agentServerOptions(4 * 1024 * 1024));
server.addService(grpcServiceDefinition(AgentControlService), {
  connect(call: grpc.ServerDuplexStream<AgentMessage, ControlMessage | WireMessage>) {
    call.on("data", (message: AgentMessage) => {
      if (message.body.case !== "hello") return;
      sessions += 1;
      if (values.offer !== undefined) welcomed.add(call);
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
    // Only with --offer, so the figures without one carry no listener of its own. A stream
    // closes however it ends: grpc-js destroys a cancelled one, which emits "close".
    if (values.offer !== undefined) call.on("close", () => welcomed.delete(call));
  },
});
server.bindAsync(values.addr, grpc.ServerCredentials.createInsecure(), (error, port) => {
  if (error) {
    process.stderr.write(`echo-server: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening ${port}\n`);
});
if (values.offer !== undefined) {
  const offer = new WireMessage(readFileSync(values.offer));
  createInterface({ input: process.stdin }).on("line", (line) => {
    const match = /^fanout (\d+)$/.exec(line.trim());
    if (!match) return;
    const streams = [...welcomed];
    const count = Math.min(Number(match[1]), streams.length);
    const at = Date.now();
    const began = performance.now();
    for (let i = 0; i < count; i++) {
      const call = streams[Math.floor((i * streams.length) / count)];
      // The codec passes a WireMessage's bytes through, as it does Control's framed offers.
      call?.write(offer);
    }
    process.stdout.write(`fanout ${at} ${count} ${(performance.now() - began).toFixed(1)}\n`);
  });
}
process.once("SIGTERM", () => {
  server.forceShutdown();
  process.exit(0);
});
