/**
 * A round-robin TCP load balancer on loopback, for tests that run several Control processes
 * behind one agent address.
 */
import { createServer as createNetServer, connect as netConnect, type Socket } from "node:net";

/**
 * A TCP load balancer: each connection goes to the next backend in turn, or to the one after
 * when that one refuses (a killed Control), and is piped both ways until either side ends.
 */
export async function roundRobin(
  ports: readonly number[],
): Promise<{ port: number; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  const server = createNetServer((client) => {
    track(client);
    client.on("error", () => {});
    const attempt = (tries: number) => {
      const port = ports[next++ % ports.length] as number;
      const upstream = netConnect(port, "127.0.0.1");
      track(upstream);
      let connected = false;
      upstream.once("connect", () => {
        connected = true;
        client.pipe(upstream);
        upstream.pipe(client);
      });
      upstream.on("error", () => {
        if (!connected && tries + 1 < ports.length && !client.destroyed) attempt(tries + 1);
        else client.destroy();
      });
      upstream.on("close", () => {
        if (connected) client.destroy();
      });
      client.once("close", () => upstream.destroy());
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
