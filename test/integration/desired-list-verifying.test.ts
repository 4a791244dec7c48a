/**
 * `agentctl desired list` while its convergence campaign's nodes are back on the target but
 * still in their config grace: converged counts only nodes confirmed on the version; the
 * verifying ones are said apart. Real binary, real Control, simulated agents.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { FleetService } from "../../proto/gen/agentcontrol/admin/v1/fleet_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { eventually } from "../helpers/raw-agent.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

describe("agentctl desired list while nodes verify", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture({
      worker: { intervalMs: 200, convergenceIntervalMs: 300 },
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
      // Two minutes of config grace: the nodes stay verifying through the test.
      timeouts: {
        reconnectSeconds: 10,
        configGraceSeconds: 120,
        heartbeatSeconds: 2,
        offlineAfterSeconds: 10,
      },
    });
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 3, idPrefix: "ver", labels: { pool: "ver" } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("counts verifying nodes apart from converged ones", async () => {
    const set = await agentctl(
      ["desired", "set", "--version", NEW, "--pool", "ver", "--disruption-budget", "100", "--yes"],
      env,
    );
    expect(set.code).toBe(0);
    let id = "";
    await eventually(
      async () => {
        const { campaigns } = await f.campaigns.listCampaigns({});
        id = campaigns.find((c) => c.createdBy.startsWith("convergence:"))?.id ?? "";
        return id !== "";
      },
      30_000,
      "a convergence campaign",
    );
    await waitForCampaign(f.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 3),
    );
    const listed = await agentctl(["desired", "list"], env);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).toMatch(/ 0\/3 .*converging: 3 verifying$/m);
    const json = JSON.parse((await agentctl(["desired", "list", "--json"], env)).stdout) as {
      desiredVersions: { nodes: number; converged?: number; verifying?: number }[];
    };
    expect(json.desiredVersions[0]).toMatchObject({ nodes: 3, verifying: 3 });
    expect(json.desiredVersions[0]?.converged ?? 0).toBe(0);
    // The dashboard's fleet summary counts them the same way.
    const summary = await f.tc.client(FleetService).getFleetSummary({});
    expect(summary.desired[0]?.desired).toMatchObject({ nodes: 3, converged: 0, verifying: 3 });
  });
});
