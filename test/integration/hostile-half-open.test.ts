import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually } from "../helpers/raw-agent.js";
import { startTcpProxy, type TcpProxy } from "./hostile-tcp-proxy.js";

const OFFLINE_AFTER_S = 1;
const heartbeat = { body: { case: "heartbeat" as const, value: {} } };

describe("a half-open connection: an agent that vanishes without closing", () => {
  let tc: TestControl;
  let proxy: TcpProxy;
  beforeAll(async () => {
    tc = await startTestControl({
      config: { timeouts: { heartbeatSeconds: 0.2, offlineAfterSeconds: OFFLINE_AFTER_S } },
    });
    proxy = await startTcpProxy(tc.agentAddress);
  });
  afterAll(async () => {
    await proxy?.close();
    await tc?.stop();
  });

  const online = async (nodeId: string) =>
    (
      await tc.control.db.pool.query<{ online: boolean }>(
        "select online from nodes where id = $1",
        [nodeId],
      )
    ).rows[0]?.online;

  it("is marked offline within the timeout, its stream is ended, and others stay online", async () => {
    const join = await tc.joinToken();
    const ghost = await connectAgent(proxy.address, join, "ghost-1");
    const alive = await connectAgent(tc.agentAddress, join, "alive-1");
    const beats = setInterval(() => {
      ghost.stream.send(heartbeat);
      alive.stream.send(heartbeat);
    }, 100);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await online("ghost-1")).toBe(true);
      const vanished = Date.now();
      proxy.blackhole(); // no FIN, no RST: packets simply stop, both ways
      await eventually(async () => (await online("ghost-1")) === false, 5000, "ghost offline");
      const detectedMs = Date.now() - vanished;
      // The timeout, plus the hub's sweep (≤ 250 ms here) and the batched write (100 ms).
      expect(detectedMs).toBeLessThan(OFFLINE_AFTER_S * 1000 + 1000);
      expect(tc.control.hub.connected("ghost-1")).toBeUndefined();
      // Control also ends the HTTP/2 stream it can no longer deliver a status on.
      await eventually(() => proxy.heldStreamEnd(), 4000, "the ghost's stream ended by Control");
      expect(await online("alive-1")).toBe(true);
      expect(tc.control.hub.connected("alive-1")).toBeDefined();
    } finally {
      clearInterval(beats);
      alive.stream.close();
    }
  });
});
