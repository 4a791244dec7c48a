/**
 * `agentctl campaign plan` and `campaign start --help` as an operator reads them before a
 * rollout, through the real binary against a real Control: the failures each batch tolerates
 * (and a canary that tolerates none said so), what bounds the duration estimate, and where the
 * default batches come from.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW } from "./campaign-fixture.js";

describe("agentctl campaign plan, read before a rollout", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture();
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 20, idPrefix: "web", labels: { pool: "web" } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  const plan = (...flags: string[]) =>
    agentctl(["campaign", "plan", "--version", NEW, ...flags], env);

  it("says per batch how many failures it tolerates, and that the canary tolerates none", async () => {
    const r = await plan("--batches", "5:0s,50:0s,100:0s", "--threshold", "10");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^BATCH +PERCENT +NODES +TOLERATES +MIN DURATION +NODES IN ORDER$/m);
    expect(r.stdout).toMatch(/^1 +5% +1 +0 +0s +web-\d{5}$/m);
    expect(r.stdout).toMatch(/^2 +50% +9 +0 +0s /m);
    expect(r.stdout).toMatch(/^3 +100% +10 +1 +0s /m);
    expect(r.stdout).toContain(
      "Batch 1 tolerates no failure: its first failed node breaches the 10% threshold (a larger first batch or a higher --threshold absorbs one)\n",
    );
    const json = JSON.parse((await plan("--batches", "5:0s,100:0s", "--json")).stdout) as {
      batches: { toleratedFailures?: number }[];
    };
    // 1 node at 5 %: none; 19 nodes at 5 %: floor(0.95) = none either.
    expect(json.batches.map((b) => b.toleratedFailures ?? 0)).toEqual([0, 0]);
  });

  it("names what bounds the estimate: the pool budget, the config grace, the reconnect timeout", async () => {
    const r = await plan("--batches", "5:0s,100:0s", "--config-grace", "1m");
    expect(r).toMatchObject({ code: 0, stderr: "" });
    // 20 nodes in pool web at 5 %: one at a time; 1 + 19 rounds of the 1 min grace.
    expect(r.stdout).toMatch(
      /\nEstimated duration: 20 min to 24 min if started now, ending [^\n]+\nBounded by: pool disruption budget 5 %: 1 of pool web at once, 19 rounds in batch 2; config grace 60 s per round \(20 rounds\); reconnect timeout 10 s per round at the longest\n$/,
    );
  });

  it("says where --batches' default comes from in campaign start --help", async () => {
    const r = await agentctl(["campaign", "start", "--help"], env);
    expect(r.code).toBe(0);
    const line = r.stdout.split("\n").find((l) => l.includes("--batches")) ?? "";
    expect(line).not.toContain("(default 5:30m,25:30m,100:30m)");
    expect(r.stdout).toMatch(/--batches[\s\S]*5,25,100 %[\s\S]*policy\.minBatchDurationSeconds/);
  });

  it("says in campaign abort --help what --rollback rolls back, what not, and the way back", async () => {
    const r = await agentctl(["campaign", "abort", "--help"], env);
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\s+/g, " ");
    expect(text).toContain("only the current batch");
    expect(text).toContain("batches that passed stay on the target");
    expect(text).toContain("confirmed sequence");
    expect(text).toContain("under a new version with a higher sequence");
  });
});
