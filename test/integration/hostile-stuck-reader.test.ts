import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperationSchema } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually } from "../helpers/raw-agent.js";
import { startTcpProxy, type TcpProxy } from "./hostile-tcp-proxy.js";

const QUEUE = 16;
/** An operation of about 64 KiB, so a stalled reader exhausts its HTTP/2 window quickly. */
const bigOperation = (n: number) => ({
  id: `op-${n}`,
  bytes: toBinary(
    OperationSchema,
    create(OperationSchema, {
      id: `op-${n}`,
      kind: {
        case: "agentUpgrade",
        value: { version: "9.9.9", envelope: { payload: new Uint8Array(64 * 1024) } },
      },
    }),
  ),
});

describe("an agent that stops reading its stream", () => {
  let tc: TestControl;
  let proxy: TcpProxy;
  beforeAll(async () => {
    tc = await startTestControl({ config: { limits: { sendQueueLength: QUEUE } } });
    proxy = await startTcpProxy(tc.agentAddress);
  });
  afterAll(async () => {
    await proxy?.close();
    await tc?.stop();
  });

  it("is closed once its bounded send queue is full, though it never reads; others are unaffected", async () => {
    const join = await tc.joinToken();
    const stuck = await connectAgent(proxy.address, join, "stuck-1");
    const healthy = await connectAgent(tc.agentAddress, join, "healthy-1");
    proxy.stallDownstream();
    stuck.stream.pause();

    let accepted = 0;
    for (let n = 0; n < 2000; n += 1) {
      if (!tc.control.hub.send("stuck-1", bigOperation(n))) break;
      accepted += 1;
      await new Promise((resolve) => setImmediate(resolve)); // let HTTP/2 write what it can
    }
    // Bounded: the queue plus grpc-js's write buffer; nothing more is held for this agent.
    expect(accepted).toBeLessThanOrEqual(QUEUE + 16 + 2);
    expect(tc.control.hub.connected("stuck-1")).toBeUndefined();
    expect(tc.control.hub.send("stuck-1", bigOperation(-1))).toBe(false);

    // Really closed: Control ends the HTTP/2 stream (reset or trailers) while the agent still
    // has not read a byte, instead of waiting forever behind data the agent will never take.
    await eventually(() => proxy.heldStreamEnd(), 5000, "Control to end the stuck stream");

    expect(tc.control.hub.send("healthy-1", bigOperation(0))).toBe(true);
    expect((await healthy.stream.next()).body.case).toBe("operation");
    await eventually(
      async () =>
        (await tc.control.db.pool.query("select online from nodes where id = 'stuck-1'")).rows[0]
          ?.online === false,
      3000,
      "stuck node offline",
    );
    healthy.stream.close();
  });
});
