/**
 * A Prometheus gate that fails breaches its batch, and `agentctl campaign show` says why with
 * the failing value named once (`… not > 1000 (302)`, never `(302) (value 302)`). Real binary,
 * real Control, simulated agents, and a loopback HTTP server answering Prometheus' query API.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

describe("agentctl campaign show of a gate failure", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;
  let prometheus: Server;
  let url = "";

  beforeAll(async () => {
    // Every instant query answers one sample, 302.
    prometheus = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          status: "success",
          data: { resultType: "vector", result: [{ metric: {}, value: [0, "302"] }] },
        }),
      );
    });
    await new Promise<void>((r) => prometheus.listen(0, "127.0.0.1", r));
    const address = prometheus.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    url = `http://127.0.0.1:${address.port}`;
    f = await campaignFixture();
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 2, idPrefix: "gated" });
  });
  afterAll(async () => {
    await f?.stop();
    await new Promise((r) => prometheus?.close(r));
  });

  it("names the failing value once, under the batch_failed code", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        NEW,
        "--batches",
        "5:0s,100:0s",
        "--gate",
        `prometheus ${url} sum(agent_control_nodes) > 1000`,
        "--yes",
      ],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    await waitForCampaign(f.campaigns, id);
    const shown = await agentctl(["campaign", "show", id], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /^Stopped: +batch_failed: gate 1 \(prometheus sum\(agent_control_nodes\)\) of batch 1 failed: 1 of 1 sample\(s\) not > 1000 \(302\)$/m,
    );
    expect(shown.stdout).not.toContain("(value 302)");
  });
});
