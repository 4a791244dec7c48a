/**
 * A real Agent stopped by its service manager (SIGTERM to the supervisor) says so in its log:
 * one JSON "stopping" line naming the signal from the supervisor, and one from the Agent it
 * runs, before both exit 0.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAgent } from "../../agent/bundle.js";
import type { CampaignFixture } from "../integration/campaign-fixture.js";
import { agentCampaignFixture, enrollFlags, waitOnline } from "./agent-campaign-fixture.js";
import { type RunningAgent, startAgent } from "./agent-fixture.js";

describe("a real Agent stopped with SIGTERM", () => {
  let fx: CampaignFixture;
  let dir = "";
  let agent: RunningAgent | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-stop-log-"));
    await writeFile(
      join(dir, "agent-1.0.0.mjs"),
      await bundleAgent({ version: "1.0.0", platform: "linux-amd64" }),
    );
    fx = await agentCampaignFixture();
  }, 120_000);

  afterAll(async () => {
    await agent?.kill();
    await fx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("logs one stopping line with the signal from the supervisor and from the Agent", async () => {
    const nodeId = "stop-log-1";
    agent = startAgent(
      join(dir, "agent-1.0.0.mjs"),
      join(dir, nodeId),
      await enrollFlags(fx, nodeId, 10_000),
    );
    await waitOnline(fx.tc, nodeId, "1.0.0");
    expect(await agent.stop()).toBe(0);
    const lines = agent
      .logs()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { component: string; msg: string; signal?: string });
    const stopping = lines.filter((l) => l.msg === "stopping");
    expect(stopping.map((l) => [l.component, l.signal]).sort()).toEqual([
      ["agent", "SIGTERM"],
      ["agent-supervisor", "SIGTERM"],
    ]);
    // The supervisor's line comes first: it is the one the service manager signalled.
    expect(stopping[0]?.component).toBe("agent-supervisor");
  }, 120_000);
});
