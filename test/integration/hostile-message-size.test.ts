/**
 * Every byte an Agent sends is bounded: by default an agent message is at most 64 KiB
 * (`limits.maxAgentMessageBytes`), far below the 4 MiB Control may send, so one stream cannot
 * make Control decode megabytes per message.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const observed = (bytes: number) => ({
  body: {
    case: "observed" as const,
    value: { operationId: "op-1", phase: 1, message: "x".repeat(bytes) },
  },
});

describe("hostile: oversized agent messages under the default limit", { timeout: 60_000 }, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("ends a stream that sends a message over 64 KiB with RESOURCE_EXHAUSTED, saying so", async () => {
    const { stream } = await connectAgent(tc.agentAddress, await tc.joinToken(), "big-default-1");
    stream.send(observed(70 * 1024));
    const end = await stream.ended;
    expect(end.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(end.details).toMatch(/larger than max .*65536/);
  });

  it("keeps a stream whose messages stay under 64 KiB", async () => {
    const { stream } = await connectAgent(tc.agentAddress, await tc.joinToken(), "big-default-2");
    stream.send(observed(60 * 1024));
    stream.send({ body: { case: "heartbeat", value: {} } });
    const early = await Promise.race([
      stream.ended.then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("open"), 1000)),
    ]);
    expect(early).toBe("open");
    stream.close();
    await stream.ended;
  });
});
