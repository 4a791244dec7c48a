/**
 * A byte budget per agent stream, beside the message rate: a stream that sends large messages
 * below the message rate is ended RESOURCE_EXHAUSTED once it has sent more bytes than its
 * burst allows above `limits.agentStreamBytesPerSecond`; a stream sending below the byte rate,
 * longer than its burst lasts, stays.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const BYTES_PER_SECOND = 4096;
const BURST = 24 * 1024;

/** A ConfigStatus of about `bytes` bytes on the wire. */
const configStatus = (bytes: number) => ({
  body: { case: "configStatus" as const, value: { ok: true, message: "x".repeat(bytes) } },
});

describe("an agent stream over its byte budget", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: {
        limits: {
          maxAgentMessageBytes: 16 * 1024,
          agentStreamBytesPerSecond: BYTES_PER_SECOND,
          agentStreamBurstBytes: BURST,
        },
      },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it("ends only that stream with RESOURCE_EXHAUSTED; a stream below the byte rate stays", async () => {
    const join = await tc.joinToken();
    const flooder = await connectAgent(tc.agentAddress, join, "bytes-flooder-1");
    const steady = await connectAgent(tc.agentAddress, join, "bytes-steady-1");
    // 2 KiB twice a second for 3.2 s: about 13 KiB per 3.2 s more than the burst would
    // allow without the rate refilling it (here 26 KiB in all, below the rate of 4 KiB/s).
    const beat = setInterval(() => steady.stream.send(configStatus(1800)), 500);
    try {
      // Ten messages of 8 KiB: far below the message rate, three times the byte burst.
      for (let i = 0; i < 10; i += 1) flooder.stream.send(configStatus(8 * 1024));
      const end = await flooder.stream.ended;
      expect(end.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(end.details).toMatch(/byte rate limit exceeded/);
      expect(end.details).toMatch(/limits\.agentStreamBytesPerSecond/);
      await new Promise((resolve) => setTimeout(resolve, 3200));
      expect(tc.control.hub.connected("bytes-steady-1")).toBeDefined();
      expect(tc.control.hub.connected("bytes-flooder-1")).toBeUndefined();
    } finally {
      clearInterval(beat);
    }
    steady.stream.close();
    expect((await steady.stream.ended).code).toBe(status.OK);
  });
});
