import { createServer, type Server, type Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { clientVersion } from "../../../cli/version.js";
import {
  CampaignPhase,
  CampaignSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

let fake: FakeControl;

/**
 * `n` watch updates of campaign c1, each in a batch of its own (so each is a line: watch
 * writes a line per state change), the last one completed and finished.
 */
const updates = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    create(CampaignSchema, {
      id: "c1",
      nodeCount: i + 1,
      currentBatch: i,
      phase: i === n - 1 ? CampaignPhase.COMPLETED : CampaignPhase.RUNNING,
      ...(i === n - 1 ? { finishedAt: timestampNow() } : {}),
    }),
  );
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeControl();
  env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "viewer-token" };
});

afterAll(async () => {
  await fake.stop();
});

describe("agentctl version", () => {
  it("prints agentctl's version and the server's", async () => {
    const result = await runCli(["version"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Client version: +${clientVersion()}$`, "m"));
    expect(result.stdout).toMatch(/^Server version: +9\.8\.7$/m);
    expect(result.stdout).toMatch(/^Server runtime: +node 20\.19\.0 linux-x64$/m);
    expect(result.stdout).toMatch(/^Server instance: +fake-1$/m);
    expect(clientVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("with --client asks no server", async () => {
    const result = await runCli(["version", "--client", "--json"], {
      env: { AGENTCTL_SERVER: "http://127.0.0.1:9" },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      client: {
        version: clientVersion(),
        nodeVersion: process.version.slice(1),
        platform: `${process.platform}-${process.arch}`,
      },
    });
  });

  it("prints the client's part, then fails, when the server cannot be reached", async () => {
    const result = await runCli(["version"], { env: { AGENTCTL_SERVER: "http://127.0.0.1:9" } });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Client version: /m);
    expect(result.stderr).toMatch(/^agentctl: cannot reach Control at http:\/\/127\.0\.0\.1:9/);
  });
});

describe("-o yaml", () => {
  it("renders the JSON output as YAML", async () => {
    const result = await runCli(["version", "-o", "yaml"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^client:\n {2}version: /);
    expect(parse(result.stdout)).toMatchObject({
      server: { version: "9.8.7", instanceId: "fake-1" },
    });
  });

  it("renders each update of a watch as its own YAML document", async () => {
    fake.state.watchUpdates = updates(2);
    const result = await runCli(["campaign", "watch", "c1", "-o", "yaml"], { env });
    const docs = parseAllDocuments(result.stdout).map((d) => d.toJSON());
    expect(docs.map((d) => d.campaign.nodeCount)).toEqual([1, 2]);
    fake.state.watchUpdates = [];
  });
});

describe("--timeout", () => {
  let hung: Server;
  let url = "";
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers a byte.
    hung = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(hung.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => hung.close(resolve));
  });

  it.each([[["node", "list"]], [["version"]]])(
    "gives up on a server that never answers: agentctl %j",
    async (argv) => {
      const started = performance.now();
      const result = await runCli([...argv, "--timeout", "1s"], {
        env: { AGENTCTL_SERVER: url, AGENTCTL_TOKEN: "t" },
      });
      const elapsed = performance.now() - started;
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `agentctl: Control at ${url} did not answer in time: no answer within 1s (raise --timeout to wait longer)\n`,
      );
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(10_000);
    },
  );

  it("retries a watch whose server never answers, saying so each time, until interrupted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 2500);
    const result = await runCli(["campaign", "watch", "c1", "--timeout", "1s"], {
      env: { AGENTCTL_SERVER: url, AGENTCTL_TOKEN: "t" },
      signal: controller.signal,
    });
    expect(result.code).toBe(130);
    expect(result.stderr.split("\n")[0]).toBe(
      "connection lost ([deadline_exceeded] no answer within 1s (raise --timeout to wait longer)); reconnecting in 1s",
    );
  });

  it("reads AGENTCTL_TIMEOUT and refuses a value that is no duration", async () => {
    const result = await runCli(["node", "list"], {
      env: { AGENTCTL_SERVER: url, AGENTCTL_TOKEN: "t", AGENTCTL_TIMEOUT: "1s" },
    });
    expect(result.stderr).toContain("no answer within 1s");
    const bad = await runCli(["node", "list"], {
      env: { AGENTCTL_SERVER: url, AGENTCTL_TIMEOUT: "forever" },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'agentctl: invalid duration "forever" in AGENTCTL_TIMEOUT: use such as 30s, 2m or 0s (no limit)\n',
    );
  });

  it("lets a watch run past the timeout once the server has answered", async () => {
    fake.state.watchUpdates = updates(3);
    fake.state.watchDelayMs = 700;
    const result = await runCli(["campaign", "watch", "c1", "--json", "--timeout", "1s"], {
      env,
    });
    fake.state.watchDelayMs = 5;
    fake.state.watchUpdates = [];
    expect(result.stderr).not.toContain("no answer");
    expect(result.stdout.trim().split("\n")).toHaveLength(3);
  });
});
