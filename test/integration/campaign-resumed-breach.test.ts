/**
 * A batch that breached, paused, and was resumed by an operator passes over its threshold:
 * `agentctl campaign show` (table and JSON) says it passed after resume with its failures
 * accepted, rather than "passed" beside "> threshold". Real binary, real Control, simulated
 * agents (one of four refuses the target).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

describe("agentctl campaign show of a batch resumed after its breach", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 1, idPrefix: "bad", labels: { group: "r" }, failVersions: [NEW] });
    await f.fleet({ count: 3, idPrefix: "good", labels: { group: "r" } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("says passed after resume, with the failures accepted, in the table and the JSON", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        NEW,
        "--selector",
        "group=r",
        "--batches",
        "100:0s",
        "--threshold",
        "10",
        "--on-breach",
        "pause",
        "--disruption-budget",
        "100",
        "--yes",
      ],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    await waitForCampaign(f.campaigns, id, (c) => c.phase === CampaignPhase.PAUSED);
    const resumed = await agentctl(["campaign", "resume", id, "--yes"], env);
    expect(resumed.code).toBe(0);
    await waitForCampaign(f.campaigns, id);

    const shown = await agentctl(["campaign", "show", id], env);
    expect(shown).toMatchObject({ code: 0, stderr: "" });
    expect(shown.stdout).toMatch(
      /^1 +100% +passed after resume +4 +1\/4 failed \(25\.0%, over 10%: 1 accepted at resume\) /m,
    );
    expect(shown.stdout).not.toMatch(/25\.0% > 10%/);
    const json = JSON.parse((await agentctl(["campaign", "show", id, "--json"], env)).stdout) as {
      campaign: { batches: { state: string; failed: number; acceptedFailures?: number }[] };
    };
    expect(json.campaign.batches[0]).toMatchObject({
      state: "passed",
      failed: 1,
      acceptedFailures: 1,
    });
  });
});
