/**
 * A node an administrator revoked cannot connect again before `node reset`: `agentctl campaign
 * plan` counts it as skipped `node_revoked` (not among the nodes a batch tolerates failures of),
 * and the campaign skips it so at once. Real binary, real Control, simulated agents.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW, nodesByState } from "./campaign-fixture.js";

describe("agentctl campaign plan with a revoked node", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 20, idPrefix: "rv" });
    const revoked = await agentctl(
      ["node", "revoke", "rv-00007", "--reason", "stolen", "--yes"],
      env,
    );
    expect(revoked.code).toBe(0);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("plans it skipped node_revoked, out of the tolerated failures, and the campaign skips it so", async () => {
    const flags = ["--version", NEW, "--batches", "100:0s", "--disruption-budget", "100"];
    const r = await agentctl(["campaign", "plan", ...flags], env);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^Plan for agent 2\.0\.0: 20 node\(s\) in 1 batch\(es\)$/m);
    expect(r.stdout).toMatch(
      /^1 node\(s\) will be skipped node_revoked \(revoked by an administrator: it cannot connect before `node reset`\): rv-00007$/m,
    );
    // 19 nodes that can fail at 5 %: none tolerated (20 would tolerate one).
    expect(r.stdout).toMatch(/^1 +100% +20 +0 +0s /m);

    const started = await agentctl(["campaign", "start", ...flags, "--yes"], env);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    await expect
      .poll(async () => (await nodesByState(f.campaigns, id)).get("skipped"), { timeout: 30_000 })
      .toEqual(["rv-00007"]);
    const { nodes } = await f.campaigns.getCampaign({ id });
    expect(nodes.find((n) => n.nodeId === "rv-00007")).toMatchObject({ code: "node_revoked" });
  });
});
