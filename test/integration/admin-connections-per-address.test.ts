/**
 * The admin port bounds the connections one remote address holds at once
 * (`limits.adminConnectionsPerAddress`): a client with no token that opens connection after
 * connection holds its share, never every connection of the port, so operators from another
 * address, the dashboard and `/readyz` still get in. The excess is closed at accept and logged
 * at most once per address per minute.
 */
import { connect, type Socket } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../control/log.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const PER_ADDRESS = 4;

/** Opens a TCP connection; resolves once connected, with whether the peer closed it at once. */
async function open(port: number): Promise<{ socket: Socket; closedAtOnce: boolean }> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const closedAtOnce = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 500);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { socket, closedAtOnce };
}

describe("admin connections per remote address", { timeout: 60_000 }, () => {
  let tc: TestControl;
  const lines: Record<string, unknown>[] = [];
  const held: Socket[] = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    tc = await startTestControl({
      config: {
        limits: { adminConnectionsPerAddress: PER_ADDRESS },
        // Long enough that the held connections are not closed for silence during the test.
        timeouts: { adminHeadersSeconds: 30 },
      },
      log: createLogger({ level: "info", destination }),
    });
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await tc?.stop();
  });

  it("closes one address's connections beyond its share at accept, logged once", async () => {
    const port = Number(new URL(tc.adminUrl).port);
    for (let i = 0; i < PER_ADDRESS; i++) {
      const { socket, closedAtOnce } = await open(port);
      held.push(socket);
      expect(closedAtOnce).toBe(false);
    }
    for (let i = 0; i < 3; i++) {
      const { socket, closedAtOnce } = await open(port);
      held.push(socket);
      expect(closedAtOnce).toBe(true);
    }
    const refusals = lines.filter((l) => String(l.msg).includes("adminConnectionsPerAddress"));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ address: "127.0.0.1" });

    // A connection given back makes room for the next one.
    held.shift()?.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const again = await open(port);
    held.push(again.socket);
    expect(again.closedAtOnce).toBe(false);
  });
});
