/**
 * Small fixtures of the tests that run Control as child processes: a free loopback port, and
 * an artifact server in the test process (so a killed Control never breaks a download).
 */
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";

/** A loopback TCP port free at the moment of asking. */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Serves `agent {version} for {platform}` at `/{version}/{platform}`, from the test process. */
export async function artifactServer(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const [, version, platform] = (req.url ?? "").split("/");
    res.end(`agent ${version} for ${platform}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, base: `http://127.0.0.1:${address.port}` };
}
