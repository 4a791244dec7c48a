/**
 * `agentctl campaign retry` end to end after `abort --rollback`: a real Control, simulated
 * agents that apply and reinstate signed releases, and the real binary. The retry takes the
 * nodes the rollback took back with the canceled ones, under the batches, threshold and
 * on_breach it was given, and completes; a setting a start refuses is refused the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CampaignPhase,
  CampaignService,
  type GetCampaignResponse,
  NodeState,
  OnBreach,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { type CliFleet, startCliFleet } from "./cli-fleet.js";

describe("agentctl campaign retry after abort --rollback", { timeout: 120_000 }, () => {
  let cli: CliFleet;
  let env: Record<string, string>;

  beforeAll(async () => {
    cli = await startCliFleet("rty", [["1.3.0", 3]]);
    ({ env } = cli);
  });

  afterAll(async () => {
    await cli?.stop();
  });

  /** The campaign and its nodes, read through the admin API (the CLI acts, the API tells). */
  const show = (id: string): Promise<GetCampaignResponse> =>
    cli.tc.client(CampaignService).getCampaign({ id });

  /** Polls the campaign until `done` holds (at most 30 s). */
  const until = async (id: string, done: (s: GetCampaignResponse) => boolean, what: string) => {
    for (let i = 0; i < 300; i++) {
      const s = await show(id);
      if (done(s)) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`campaign ${id}: ${what} did not happen within 30 s`);
  };

  it("takes the rolled-back nodes again under the batches, threshold and on_breach it is given", async () => {
    const started = await agentctl(
      ["campaign", "start", "--version", "1.3.0", "--batches", "50:10m,100:10m", "--yes"],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    await until(
      id,
      (s) => s.nodes.filter((n) => n.state === NodeState.VERIFYING).length === 3,
      "its canaries back on 1.3.0",
    );
    const aborted = await agentctl(["campaign", "abort", id, "--rollback", "--yes"], env);
    expect(aborted.code).toBe(0);
    const ended = await until(id, (s) => s.campaign?.finishedAt !== undefined, "its finish");
    expect(ended.campaign?.phase).toBe(CampaignPhase.ABORTED);
    const rolledBack = ended.nodes
      .filter((n) => n.state === NodeState.ROLLED_BACK)
      .map((n) => n.nodeId);
    expect(rolledBack).toHaveLength(3);

    const retried = await agentctl(
      [
        "campaign",
        "retry",
        id,
        "--batches",
        "50:0s,100:0s",
        "--threshold",
        "20",
        "--on-breach",
        "pause",
        "--reason",
        "second attempt",
        "--yes",
      ],
      env,
    );
    expect(retried.stderr).toContain(`(retry of ${id})`);
    expect(retried.code).toBe(0);
    const retryId = retried.stdout.trim();
    const again = await show(retryId);
    expect(again.campaign?.retryOf).toBe(id);
    expect(again.campaign?.spec?.batches.map((b) => b.percent)).toEqual([50, 100]);
    expect(again.campaign?.spec?.failureThresholdPercent).toBe(20);
    expect(again.campaign?.spec?.onBreach).toBe(OnBreach.PAUSE);
    expect(again.campaign?.spec?.reason).toBe("second attempt");
    expect(again.nodes.map((n) => n.nodeId).sort()).toEqual(
      ended.nodes.map((n) => n.nodeId).sort(),
    );
    for (const node of rolledBack) expect(again.nodes.map((n) => n.nodeId)).toContain(node);

    const watched = await agentctl(["campaign", "watch", retryId], env);
    expect(watched.code).toBe(0);
    expect(watched.stdout.trimEnd().split("\n").at(-1)).toMatch(
      new RegExp(`campaign ${retryId}  completed  batch 2/2  succeeded=6`),
    );
  });

  it("refuses a retry's settings as a start refuses them, and starts nothing", async () => {
    const { campaigns } = await cli.tc.client(CampaignService).listCampaigns({});
    const original = campaigns.find((c) => c.retryOf === "")?.id ?? "";
    expect(original).not.toBe("");

    const usage = await agentctl(
      ["campaign", "retry", original, "--threshold", "101", "--yes"],
      env,
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--threshold");

    // The policy's canary share (50 % in this fleet) is Control's to judge: the retry is
    // refused with the very sentence a start over the same batches gets.
    const refused = await agentctl(
      ["campaign", "retry", original, "--batches", "60:0s,100:0s", "--yes"],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the first (canary) batch is at most 50 %, not 60 %");
    const start = await agentctl(
      ["campaign", "start", "--version", "1.3.0", "--batches", "60:0s,100:0s", "--yes"],
      env,
    );
    expect(start.code).toBe(1);
    expect(refused.stderr).toBe(start.stderr);
    const after = await cli.tc.client(CampaignService).listCampaigns({});
    expect(after.campaigns).toHaveLength(campaigns.length);
  });
});
