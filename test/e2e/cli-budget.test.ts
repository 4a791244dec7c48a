/**
 * The campaign failure budget, the minimum sample and yanked releases end to end: a real
 * Control, simulated agents that verify and apply signed releases, and the real `agentctl`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import type { TestControl } from "../helpers/control.js";
import { BATCHES, type CliFleet, startCliFleet } from "./cli-fleet.js";

/** Polls `check` every 100 ms until it returns a value, or fails after `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("agentctl --max-failures, --min-canaries and release yank against a real Control", {
  timeout: 150_000,
}, () => {
  let cli: CliFleet;
  let tc: TestControl;
  let env: Record<string, string>;

  beforeAll(async () => {
    cli = await startCliFleet("bud", [
      ["1.2.0", 2],
      ["1.3.0", 3],
    ]);
    ({ tc, env } = cli);
  });

  afterAll(async () => {
    await cli?.stop();
  });

  it("--min-canaries widens the first batch, and a plan the fleet cannot give is refused", async () => {
    const widened = await agentctl(
      ["campaign", "plan", "--version", "1.3.0", ...BATCHES, "--min-canaries", "4", "--json"],
      env,
    );
    expect(widened.code).toBe(0);
    const plan = JSON.parse(widened.stdout) as { batches: { nodeIds: string[] }[] };
    expect(plan.batches.map((b) => b.nodeIds.length)).toEqual([4, 2]);

    const refused = await agentctl(
      ["campaign", "start", "--version", "1.3.0", ...BATCHES, "--min-canaries", "7", "--yes"],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /min canaries asks for 7 node\(s\) the first batch can upgrade, and the campaign has 6/,
    );
    const bad = await agentctl(
      ["campaign", "plan", "--version", "1.3.0", "--min-canaries", "0"],
      env,
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--min-canaries/);
    const listed = await agentctl(["campaign", "list", "--json"], env);
    expect((JSON.parse(listed.stdout) as { campaigns: unknown[] }).campaigns).toEqual([]);
  });

  it("--max-failures stops the campaign once its failures exceed the budget, every batch under its threshold", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        "1.2.0",
        ...BATCHES,
        "--threshold",
        "100",
        "--max-failures",
        "1",
        "--on-breach",
        "stop",
        "--yes",
      ],
      env,
    );
    expect(started.stderr).not.toMatch(/error/i);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const watched = await agentctl(["campaign", "watch", id], env);
    expect(watched.code).toBe(3);
    expect(watched.stderr).toMatch(
      new RegExp(`^agentctl: campaign ${id} ended failed: max_failures_exceeded`),
    );
    const shown = await agentctl(["campaign", "show", id], env);
    expect(shown.stdout).toMatch(/^Max failures: +1 failed nodes over every batch$/m);
    expect(shown.stdout).toMatch(
      /max_failures_exceeded: \d of 6 nodes of the campaign failed \(max failures 1: 1 allowed\)/,
    );
    const why = await agentctl(["campaign", "why", id], env);
    expect(why.stdout).toMatch(/ended failed/);
  });

  it("release yank stops a running campaign to it, refuses it as a target, and node list --version finds the nodes on it", async () => {
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        "1.3.0",
        "--batches",
        "50:1h,100:0s",
        "--on-breach",
        "pause",
        "--yes",
      ],
      env,
    );
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const onIt = await until("3 nodes on 1.3.0", 30_000, async () => {
      const r = await agentctl(["node", "list", "--version", "1.3.0", "--json"], env);
      const nodes = (JSON.parse(r.stdout) as { nodes: { nodeId: string }[] }).nodes;
      return nodes.length === 3 ? nodes.map((n) => n.nodeId).sort() : undefined;
    });

    const unconfirmed = await agentctl(["release", "yank", "1.3.0", "--reason", "x"], env);
    expect(unconfirmed.code).toBe(2);
    const noReason = await agentctl(["release", "yank", "1.3.0", "--yes"], env);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason is required/);
    const viewer = await agentctl(
      ["release", "yank", "1.3.0", "--reason", "x", "--yes", "--token", tc.viewerToken],
      env,
    );
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/permission denied/);

    const yanked = await agentctl(
      ["release", "yank", "1.3.0", "--reason", "corrupts the cache", "--yes"],
      env,
    );
    expect(yanked).toEqual({
      code: 0,
      stdout: `release 1.3.0 yanked; running campaign(s) taking on_breach: ${id}\n`,
      stderr: "",
    });
    const again = await agentctl(["release", "yank", "1.3.0", "--reason", "again", "--yes"], env);
    expect(again.stdout).toBe(
      "release 1.3.0 was already yanked (corrupts the cache); nothing changed\n",
    );

    await until("the campaign paused on the yank", 20_000, async () => {
      const r = await agentctl(["campaign", "show", id, "--json"], env);
      const c = (JSON.parse(r.stdout) as { campaign: { phase: string; code: string } }).campaign;
      return c.phase === "paused" && c.code === "release_yanked" ? c : undefined;
    });
    const shown = await agentctl(["campaign", "show", id], env);
    expect(shown.stdout).toContain("release_yanked: release 1.3.0 was yanked: corrupts the cache");
    const why = await agentctl(["campaign", "why", id], env);
    expect(why.stdout).toMatch(/paused.*release 1\.3\.0 was yanked: corrupts the cache/);

    const resumed = await agentctl(["campaign", "resume", id, "--yes"], env);
    expect(resumed.code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    const nodes = await agentctl(["campaign", "show", id, "--nodes", "--json"], env);
    const json = JSON.parse(nodes.stdout) as {
      campaign: { phase: string; code: string };
      nodes: { nodeId: string; state: string }[];
    };
    expect(json.campaign.code).toBe("release_yanked");
    expect(json.nodes.filter((n) => n.state === "waiting")).toHaveLength(3);

    const restart = await agentctl(["campaign", "start", "--version", "1.3.0", "--yes"], env);
    expect(restart.code).toBe(1);
    expect(restart.stderr).toMatch(/release 1\.3\.0 was yanked \(corrupts the cache\)/);
    const desired = await agentctl(
      ["desired", "set", "--version", "1.3.0", "--pool", "edge", "--yes"],
      env,
    );
    expect(desired.code).toBe(1);
    expect(desired.stderr).toMatch(/release 1\.3\.0 was yanked/);

    const listed = await agentctl(["node", "list", "--version", "1.3.0", "--json"], env);
    expect(
      (JSON.parse(listed.stdout) as { nodes: { nodeId: string }[] }).nodes
        .map((n) => n.nodeId)
        .sort(),
    ).toEqual(onIt);
    const releases = await agentctl(["release", "list"], env);
    expect(releases.stdout).toMatch(/^1\.3\.0 \(yanked\) +3 /m);
    const audit = await agentctl(["audit", "list", "--json"], env);
    const events = (JSON.parse(audit.stdout) as { events: { action: string; actor: string }[] })
      .events;
    expect(events.filter((e) => e.action === "release.yank")).toHaveLength(1);
    await agentctl(["campaign", "abort", id, "--yes"], env);
  });
});
