import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually, hello, openRawStream, type RawStream } from "../helpers/raw-agent.js";

const LIMIT = 3;
const COUNT = 60;

describe("concurrent handshakes are limited", () => {
  let tc: TestControl;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    tc = await startTestControl({ config: { limits: { maxConcurrentHandshakes: LIMIT } } });
  });
  afterAll(async () => {
    await fleet?.stop();
    await tc?.stop();
  });

  const handshakes = async () => {
    const text = await (await fetch(`${tc.adminUrl}/metrics`)).text();
    return Number(/^agent_control_handshakes_in_flight (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };

  it("refuses the excess with RESOURCE_EXHAUSTED, and a storm of agents backing off all get in", async () => {
    const join = await tc.joinToken();
    // Streams that connect and never say Hello each hold a handshake slot (until the Hello
    // timeout).
    const silent: RawStream[] = Array.from({ length: LIMIT }, () =>
      openRawStream(tc.agentAddress, join),
    );
    await eventually(async () => (await handshakes()) === LIMIT, 5000, "slots held by silence");

    const excess = openRawStream(tc.agentAddress, join);
    excess.send(hello("excess-1"));
    const refused = await excess.ended;
    expect(refused.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(refused.details).toMatch(/too many agents are connecting at once/);

    fleet = await startFleet({
      server: tc.agentAddress,
      joinToken: join,
      count: COUNT,
      seed: 11,
      backoff: { baseMs: 50, capMs: 400 },
    });
    let peak = 0;
    const sampler = setInterval(() => {
      handshakes().then(
        (n) => {
          peak = Math.max(peak, n);
        },
        () => undefined,
      );
    }, 20);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(fleet.welcomedCount()).toBe(0); // every slot is still held
      for (const stream of silent) stream.close();
      await fleet.waitUntil((f) => f.welcomedCount() === COUNT, 30_000, "whole fleet welcomed");
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThanOrEqual(LIMIT);
    expect(fleet.stats().connects).toBeGreaterThan(COUNT); // refused attempts were retried
    await eventually(async () => (await handshakes()) === 0, 5000, "no handshake left");
  });
});
