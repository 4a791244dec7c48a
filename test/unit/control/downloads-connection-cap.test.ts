/**
 * The downloads listener caps the connections it holds (`downloads.maxConnections`): silent
 * connections beyond it are closed at accept, so a flood of them cannot use up Control's file
 * descriptors (its database, agent and admin connections need them).
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../../control/log.js";
import {
  type DownloadsServer,
  startDownloadsServer,
} from "../../../control/releases/downloads-server.js";

let server: DownloadsServer | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
});

/** Opens a TCP connection that sends nothing; resolves once connected. */
function silent(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve({ socket, closed }));
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.on("error", () => {});
    socket.once("error", reject);
    sockets.push(socket);
  });
}

describe("the downloads listener's connection cap", () => {
  it("holds at most maxConnections connections; the next is closed at accept", async () => {
    server = await startDownloadsServer({
      address: { host: "127.0.0.1", port: 0 },
      route: async () => false,
      log: createLogger({ level: "silent" }),
      idleMs: 60_000,
      maxConnections: 3,
    });
    const held = await Promise.all([0, 1, 2].map(() => silent(server?.port ?? 0)));
    const over = await silent(server.port);
    await over.closed; // closed by the server, well before any timeout
    let heldClosed = 0;
    for (const h of held) void h.closed.then(() => heldClosed++);
    await new Promise((r) => setTimeout(r, 200));
    expect(heldClosed).toBe(0);
  });
});
