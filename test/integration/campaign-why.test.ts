/**
 * `agentctl campaign why ID` against a real Control: the real binary over the admin API, a
 * real PostgreSQL, and simulated agents on real streams. The sentences are those an operator
 * reads: a minimum duration counting down, a pause with its actor and reason, a closed window
 * with its next opening, a full download budget, nodes that deferred (simulated busy agents
 * answering DEFERRED); and `campaign plan`'s duration estimate.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { eventually } from "../helpers/raw-agent.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

describe("agentctl campaign why", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    // A first batch may hold the whole selection (the download budget needs a batch of 2+).
    f = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 2, idPrefix: "soak", labels: { group: "soak" } });
    await f.fleet({ count: 2, idPrefix: "win", labels: { group: "win" } });
    // Agents that take a minute over each phase: an offered one stays ACCEPTED, downloading.
    await f.fleet({ count: 3, idPrefix: "dl", labels: { group: "dl" }, stepMs: 60_000 });
    // Busy agents: every offer is answered DEFERRED.
    await f.fleet({
      count: 2,
      idPrefix: "busy",
      labels: { group: "busy" },
      rates: { defer: 1 },
      deferChance: 1,
    });
  });
  afterAll(async () => {
    await f?.stop();
  });

  const start = async (...flags: string[]): Promise<string> => {
    const r = await agentctl(["campaign", "start", "--version", NEW, "--yes", ...flags], env);
    expect(r.stderr).not.toMatch(/error|failed/i);
    expect(r.code).toBe(0);
    return r.stdout.trim();
  };

  it("names the minimum duration left once the canary settled, then who paused it and why", async () => {
    const id = await start("--selector", "group=soak", "--batches", "5:30m,100:30m");
    await waitForCampaign(f.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 1),
    );
    const why = await agentctl(["campaign", "why", id], {
      ...env,
      AGENTCTL_TOKEN: f.tc.viewerToken,
    });
    expect(why).toMatchObject({ code: 0, stderr: "" });
    expect(why.stdout).toBe(
      `campaign ${id} running, batch 1 of 2 waits for:\n  - minimum duration: 30 min left\n`,
    );

    const paused = await agentctl(
      ["campaign", "pause", id, "--reason", "change freeze", "--yes"],
      env,
    );
    expect(paused.code).toBe(0);
    await waitForCampaign(f.campaigns, id, (c) => c.phase === CampaignPhase.PAUSED);
    const after = await agentctl(["campaign", "why", id], env);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(
      new RegExp(
        `^campaign ${id} paused, batch 1 of 2 waits for:\\n  - paused by \\S+ at (${DAYS.join("|")}) \\d\\d:\\d\\d UTC: change freeze\\n  - minimum duration: 30 min left\\n$`,
      ),
    );

    const json = await agentctl(["campaign", "why", id, "--json"], env);
    const body = JSON.parse(json.stdout) as { waits: { kind: string; left?: string }[] };
    expect(body.waits.map((w) => w.kind)).toEqual(["paused", "min_duration"]);
    expect(body.waits[1]?.left).toMatch(/^1[78]\d\d(\.\d+)?s$/);
  });

  it("says a campaign started outside its window waits for it, and when it opens", async () => {
    // A window on the day after tomorrow (UTC) is closed now, whatever the time of day.
    const day = DAYS[(new Date().getUTCDay() + 2) % 7] as string;
    const id = await start(
      "--selector",
      "group=win",
      "--batches",
      "5:1m,100:1m",
      "--window",
      `${day} 02:00-03:00 UTC`,
    );
    const why = await agentctl(["campaign", "why", id], env);
    expect(why.code).toBe(0);
    expect(why.stdout).toBe(
      `campaign ${id} running, batch 1 of 2 waits for:\n  - window closed: opens ${day} 02:00 UTC\n  - minimum duration: 60 s left\n`,
    );
  });

  it("says the waiting nodes wait for the download budget, with how many download and the budget", async () => {
    const id = await start(
      "--selector",
      "group=dl",
      "--batches",
      "100:0s",
      "--disruption-budget",
      "100",
      "--max-downloads",
      "1",
      "--reconnect-timeout",
      "10m",
    );
    // Offered, then applying once it answered ACCEPTED: either way it holds the one download.
    await waitForCampaign(f.campaigns, id, (c) =>
      c.counts.some(
        (n) => (n.state === NodeState.OFFERED || n.state === NodeState.APPLYING) && n.count === 1,
      ),
    );
    const why = await agentctl(["campaign", "why", id], env);
    expect(why).toMatchObject({ code: 0, stderr: "" });
    expect(why.stdout).toMatch(
      new RegExp(
        `^campaign ${id} running, batch 1 of 1 waits for:\\n  - 1 node upgrading, reconnect timeout 10 min left\\n  - download budget: 1 of 1 downloading \\(max downloads\\)\\n$`,
      ),
    );
    const json = await agentctl(["campaign", "why", id, "--json"], env);
    const body = JSON.parse(json.stdout) as {
      waits: { kind: string; count?: number; limit?: number }[];
    };
    expect(body.waits[1]).toMatchObject({ kind: "download_budget", count: 1, limit: 1 });
  });

  it("counts the nodes that deferred, with when the next is offered again, in why and the metrics", async () => {
    const id = await start(
      "--selector",
      "group=busy",
      "--batches",
      "100:0s",
      "--disruption-budget",
      "100",
      "--max-defer",
      "1h",
    );
    await eventually(
      async () => {
        const { nodes } = await f.campaigns.getCampaign({ id });
        return (
          nodes.length === 2 &&
          nodes.every((n) => n.state === NodeState.WAITING && n.deferredAt !== undefined)
        );
      },
      30_000,
      "both nodes deferred",
    );
    const why = await agentctl(["campaign", "why", id], env);
    expect(why).toMatchObject({ code: 0, stderr: "" });
    const deferredLine = new RegExp(
      `^campaign ${id} running, batch 1 of 1 waits for:\\n  - 2 nodes deferred \\(busy\\), offered again in (\\d+) s at the soonest, skipped once past max defer\\n$`,
    );
    expect(why.stdout).toMatch(deferredLine);
    // The agents defer for 60 s; agentctl's own start may take seconds on a loaded machine.
    const offeredIn = Number(deferredLine.exec(why.stdout)?.[1]);
    expect(offeredIn).toBeGreaterThanOrEqual(30);
    expect(offeredIn).toBeLessThanOrEqual(60);
    const json = JSON.parse((await agentctl(["campaign", "why", id, "--json"], env)).stdout) as {
      waits: { kind: string; count?: number }[];
    };
    expect(json.waits).toMatchObject([{ kind: "deferred", count: 2 }]);
    await expect
      .poll(async () => (await fetch(`${f.tc.adminUrl}/metrics`)).text(), { timeout: 10_000 })
      .toContain(`agent_control_campaign_deferred_nodes{campaign="${id}"} 2`);
  });

  it("campaign plan estimates the duration from the batches, slots and reconnect timeout", async () => {
    // The window group: 2 nodes still on the old version (their campaign offers nothing), one
    // per batch; no minimum duration; a 10 s reconnect timeout, no config grace: 0 s to 2 × 10 s.
    const r = await agentctl(
      ["campaign", "plan", "--version", NEW, "--selector", "group=win", "--batches", "5:0s,100:0s"],
      env,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /\nEstimated duration: 0 s to 20 s if started now, ending \d{4}-\d\d-\d\d \d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d UTC \(from nodes back at once to each taking its whole reconnect timeout; failures, gates and other campaigns' load not counted\)\nBounded by: reconnect timeout 10 s per round at the longest\n$/,
    );
  });

  it("refuses an unknown campaign with one line naming it", async () => {
    const r = await agentctl(["campaign", "why", "c-none"], env);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/no campaign with id "c-none"/);
  });
});
