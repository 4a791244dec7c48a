/**
 * `agentctl campaign watch ID` off a terminal (a pipe, a log) against a real Control: a line
 * on each change of the campaign's state or counts, as `kubectl rollout status` does, at most
 * one a second while only counts move, and the counts a burst ended on still written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW } from "./campaign-fixture.js";

/** `2026-12-07T15:55:52.123Z  campaign ID  PHASE  batch 1/1  COUNTS  …` */
const LINE = /^(\S+) {2}campaign \S+ {2}(\S+) {2}batch \S+ {2}(\S+(?: \S+=\d+)*)/;

describe("agentctl campaign watch off a terminal", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    // Two paces, so the counts move many times within one batch and one phase, slow enough
    // (each step seconds long) that the watch is following before most changes on a loaded host.
    await f.fleet({ count: 3, idPrefix: "slow", labels: { group: "w" }, stepMs: 6_000 });
    await f.fleet({ count: 3, idPrefix: "quick", labels: { group: "w" }, stepMs: 3_000 });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("writes a line on each change of the counts, at most one a second, not one a minute", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        NEW,
        "--selector",
        "group=w",
        "--batches",
        "100:0s",
        "--disruption-budget",
        "100",
        "--reconnect-timeout",
        "2m",
        "--yes",
      ],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const watched = await agentctl(["campaign", "watch", id], env);
    expect(watched).toMatchObject({ code: 0, stderr: "" });
    const lines = watched.stdout.trimEnd().split("\n");
    const parsed = lines.map((l) => LINE.exec(l));
    expect(parsed.every((m) => m !== null)).toBe(true);
    const counts = parsed.map((m) => m?.[3] ?? "");
    // Every node moves through offered, applying, restarting and succeeded at its own pace.
    expect(new Set(counts).size).toBeGreaterThanOrEqual(4);
    expect(counts.at(-1)).toBe("succeeded=6");
    // Lines of the same phase whose counts alone changed are a second apart at least.
    for (let i = 1; i < parsed.length; i++) {
      const [prev, cur] = [parsed[i - 1], parsed[i]];
      if (prev?.[2] !== cur?.[2] || /passed|completed/.test(lines[i] ?? "")) continue;
      const gap = Date.parse(cur?.[1] ?? "") - Date.parse(prev?.[1] ?? "");
      if (counts[i] !== counts[i - 1]) expect(gap).toBeGreaterThanOrEqual(950);
    }
  });
});
