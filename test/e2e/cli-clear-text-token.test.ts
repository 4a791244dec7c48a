/**
 * agentctl never sends its bearer token in clear text across the network: to an `http://`
 * server that is not on loopback it refuses (exit 2, one line naming https:// and
 * `--insecure`) before any connection, unless `--insecure` says to send it anyway. Loopback
 * stays allowed over http:// (the demo and the tests use it). The real binary, against a
 * listener on this machine's non-loopback address that records what reaches it. Security
 * review finding 13.
 */
import { createServer, type Server } from "node:http";
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";

/** An IPv4 address of this machine that is not loopback, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && !a.internal && a.family === "IPv4")?.address;

const TOKEN = "operator-token-0123456789";

describe.skipIf(external === undefined)(
  "agentctl and a clear-text server off loopback",
  {
    timeout: 120_000,
  },
  () => {
    let server: Server;
    let loopback: Server;
    const seen: Array<string | undefined> = [];
    let remoteUrl = "";
    let loopbackUrl = "";

    const listen = async (host: string): Promise<[Server, string]> => {
      const s = createServer((req, res) => {
        seen.push(req.headers.authorization);
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "unauthenticated", message: "no" }));
      });
      await new Promise<void>((resolve) => s.listen(0, host, resolve));
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      return [s, `http://${host}:${port}`];
    };

    beforeAll(async () => {
      [server, remoteUrl] = await listen(external ?? "");
      [loopback, loopbackUrl] = await listen("127.0.0.1");
    });
    afterAll(async () => {
      await new Promise((resolve) => server?.close(resolve));
      await new Promise((resolve) => loopback?.close(resolve));
    });

    it.each([
      ["--server and --token", (url: string) => [["--server", url, "--token", TOKEN], {}] as const],
      [
        "AGENTCTL_SERVER and AGENTCTL_TOKEN",
        (url: string) => [[], { AGENTCTL_SERVER: url, AGENTCTL_TOKEN: TOKEN }] as const,
      ],
    ])(
      "refuses to send the token from %s, in one line, connecting to nothing",
      async (_, given) => {
        seen.length = 0;
        const [flags, env] = given(remoteUrl);
        const result = await agentctl(["node", "list", ...flags], env);
        expect(result.code).toBe(2);
        expect(result.stdout).toBe("");
        expect(result.stderr).toMatch(/^agentctl: [^\n]+\n$/);
        expect(result.stderr).toContain("clear text");
        expect(result.stderr).toContain("https://");
        expect(result.stderr).toContain("--insecure");
        expect(result.stderr).not.toContain(TOKEN);
        expect(seen).toEqual([]);
      },
    );

    it("sends it with --insecure", async () => {
      seen.length = 0;
      const result = await agentctl(["node", "list", "--insecure"], {
        AGENTCTL_SERVER: remoteUrl,
        AGENTCTL_TOKEN: TOKEN,
      });
      expect(result.code).toBe(1);
      expect(seen).toEqual([`Bearer ${TOKEN}`]);
    });

    it("sends no token, and so needs no --insecure, when it has none", async () => {
      seen.length = 0;
      const result = await agentctl(["node", "list"], { AGENTCTL_SERVER: remoteUrl });
      expect(result.code).toBe(1);
      expect(seen).toEqual([undefined]);
    });

    it("sends it over http:// on loopback", async () => {
      seen.length = 0;
      const result = await agentctl(["node", "list"], {
        AGENTCTL_SERVER: loopbackUrl,
        AGENTCTL_TOKEN: TOKEN,
      });
      expect(result.code).toBe(1);
      expect(seen).toEqual([`Bearer ${TOKEN}`]);
    });
  },
);
