import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const RATE = 20; // messages per second; the burst allowance is max(20, 2 × rate) = 40
const heartbeat = { body: { case: "heartbeat" as const, value: {} } };

describe("a flood of messages on one agent stream", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({ config: { limits: { agentMessagesPerSecond: RATE } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("ends only the flooding stream with RESOURCE_EXHAUSTED; a steady agent above the burst stays", async () => {
    const join = await tc.joinToken();
    const flooder = await connectAgent(tc.agentAddress, join, "flooder-1");
    const steady = await connectAgent(tc.agentAddress, join, "steady-1");
    // 15 per second for 3.2 s: 48 messages, more than the burst, below the rate.
    const beat = setInterval(() => steady.stream.send(heartbeat), 1000 / 15);
    try {
      for (let i = 0; i < 500; i += 1) flooder.stream.send(heartbeat);
      const end = await flooder.stream.ended;
      expect(end.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(end.details).toMatch(/rate limit/);
      await new Promise((resolve) => setTimeout(resolve, 3200));
      expect(tc.control.hub.connected("steady-1")).toBeDefined();
      expect(tc.control.hub.connected("flooder-1")).toBeUndefined();
    } finally {
      clearInterval(beat);
    }
    steady.stream.close();
    expect((await steady.stream.ended).code).toBe(status.OK);
  });
});
