/**
 * A wave of agents reconnecting at once (a batch restarting into its new version, a Control
 * restart) must wait in the kernel's accept queue of the agent listener, not be dropped at
 * their SYN: a dropped SYN is retried by the agent's kernel only 1 s, then 3 s, then 7 s
 * later. With Node.js's default queue of 511, a 10,000-node rollout measured thousands of
 * dropped SYNs per batch (TcpExt ListenOverflows), no agent welcomed for 1–2 s after each
 * batch restarted and a tail of stragglers 2–4 s long.
 *
 * Read from the kernel, not timed: the connections are opened in one turn of Control's event
 * loop, so none is accepted before all have arrived; right after that turn every connection
 * the queue held is ESTABLISHED, and any it dropped is still SYN_SENT in `/proc/net/tcp`
 * until its retry a second later.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptBacklog } from "../../control/agents/connection-cap.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const WAVE = 1500;

/** Sockets to `port` in `/proc/net/tcp`, counted by their TCP state (hex, as the kernel writes it). */
function statesTowards(port: number): Record<string, number> {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const counts: Record<string, number> = {};
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [remote, state] = [fields[2], fields[3]];
    if (remote?.endsWith(suffix) && state !== undefined) counts[state] = (counts[state] ?? 0) + 1;
  }
  return counts;
}

describe("the agent listener's accept queue", () => {
  let tc: TestControl;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    tc = await startTestControl();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await tc?.stop();
  });

  it("asks for room for every connection Control holds, at least Node.js's default", () => {
    expect(acceptBacklog(18_872)).toBe(18_872);
    expect(acceptBacklog(115)).toBe(511);
    expect(acceptBacklog(1)).toBe(511);
  });

  it(`holds a wave of ${WAVE} connections arriving while Control's event loop is busy: none is dropped at its SYN`, async () => {
    const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim());
    expect(
      somaxconn,
      "net.core.somaxconn caps every accept queue; this test needs it above the wave",
    ).toBeGreaterThanOrEqual(WAVE);
    const port = Number(tc.agentAddress.split(":").at(-1));
    for (let i = 0; i < WAVE; i++) {
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => undefined);
      sockets.push(socket);
    }
    // The connects run before the loop's next poll, where Control accepts; read right after it.
    await new Promise((resolve) => setImmediate(resolve));
    const states = statesTowards(port);
    expect(
      states["02"] ?? 0,
      `SYN_SENT (dropped at a full queue); states: ${JSON.stringify(states)}`,
    ).toBe(0);
    expect(states["01"], "ESTABLISHED").toBe(WAVE);
  });
});
