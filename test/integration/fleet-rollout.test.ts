import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import {
  DesiredVersionService,
  PlanService,
  type RolloutPlan,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { runCli } from "../unit/cli/run-cli.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  OLD,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

// Black box: a real Control (real PostgreSQL, real admin and agent servers on port 0) and
// simulated agents over real streams. Nobody starts a campaign for the late agents: the
// leader's fleet pass (every 300 ms here) converges them to their pool's desired version.

describe("desired versions and rollout plans", { timeout: 150_000 }, () => {
  let fx: CampaignFixture;
  let stateDir: string;
  beforeAll(async () => {
    fx = await campaignFixture({
      worker: { intervalMs: 200, convergenceIntervalMs: 300 },
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    await fx.register(NEW);
    await fx.register(NEWER);
    stateDir = await mkdtemp(join(tmpdir(), "fleet-rollout-"));
  }, 120_000);
  afterAll(async () => {
    await fx?.stop();
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it("agents that enroll on the old version after a completed campaign converge to its target without anyone starting a campaign; one that confirmed a newer release is never moved back", async () => {
    const first = await fx.fleet({ count: 4, idPrefix: "edge", labels: { pool: "edge" } });
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [100], { selector: { pools: ["edge"] }, disruptionBudgetPercent: 50 }),
    });
    const done = await waitForCampaign(fx.campaigns, started.campaign?.id ?? "");
    expect(done.phase).toBe(CampaignPhase.COMPLETED);

    const desired = fx.tc.client(DesiredVersionService);
    const recorded = Date.now();
    for (;;) {
      const list = await desired.listDesiredVersions({});
      if (list.desiredVersions.some((d) => d.targetVersion === NEW)) break;
      if (Date.now() - recorded > 10_000) throw new Error("no desired version recorded");
      await new Promise((r) => setTimeout(r, 100));
    }

    // A node of the pool that confirmed 3.0.0 (sequence 30) before it enrolled here.
    await writeFile(
      join(stateDir, "edgeahead-00001.json"),
      `${JSON.stringify({ nodeId: "edgeahead-00001", version: NEWER, previousVersion: "", confirmedSequence: "30", handled: {} })}\n`,
    );
    const ahead = await fx.fleet({
      count: 1,
      idPrefix: "edgeahead",
      labels: { pool: "edge" },
      stateDir,
    });
    const enrolledAt = Date.now();
    const late = await fx.fleet({ count: 3, idPrefix: "edgelate", labels: { pool: "edge" } });
    for (const a of late.agents) expect(a.version).toBe(OLD);
    await late.waitUntil(
      (f) => f.agents.every((a) => a.version === NEW),
      60_000,
      "the late agents on the desired version",
    );
    const tookMs = Date.now() - enrolledAt;
    console.log(`late agents converged in ${tookMs} ms`);
    expect(tookMs).toBeLessThan(60_000);
    expect(late.stats().duplicateApplications).toBe(0);
    for (const a of first.agents) expect(a.version).toBe(NEW);

    // The convergence campaigns are the engine's own (actor control), over the late nodes only.
    const { campaigns } = await fx.campaigns.listCampaigns({});
    const convergence = campaigns.filter((c) => c.id.startsWith("d-"));
    expect(convergence.length).toBeGreaterThan(0);
    const audit = await fx.audit.listAuditEvents({ action: "start", pageSize: 100 });
    for (const c of convergence) {
      const start = audit.events.find((e) => e.campaignId === c.id);
      expect(start?.actor).toBe("control");
      const { nodes } = await fx.campaigns.getCampaign({ id: c.id });
      for (const n of nodes) expect(n.nodeId).toMatch(/^edgelate-/);
    }
    expect(ahead.agent("edgeahead-00001").version).toBe(NEWER);
    // An agent runs the new version before its Hello on it is recorded: read until it is.
    const edgeDesired = async () =>
      (await desired.listDesiredVersions({})).desiredVersions.find((d) =>
        d.selector?.pools.includes("edge"),
      );
    let edge = await edgeDesired();
    for (let wait = 0; edge?.converged !== 7 && wait < 10_000; wait += 100) {
      await new Promise((r) => setTimeout(r, 100));
      edge = await edgeDesired();
    }
    expect(edge?.targetVersion).toBe(NEW);
    expect(edge?.converged).toBe(7);
    expect(edge?.nodes).toBe(8);
  });

  it("a three-group plan completes its first group, waits, and halts at the second group's breach without starting the third", async () => {
    const fleets = new Map<string, Awaited<ReturnType<CampaignFixture["fleet"]>>>();
    for (const pool of ["dev", "staging", "prod"]) {
      fleets.set(
        pool,
        await fx.fleet({
          count: 3,
          idPrefix: pool,
          labels: { pool },
          ...(pool === "staging" ? { behaviours: { "staging-00002": { upgrade: "fail" } } } : {}),
        }),
      );
    }
    const plans = fx.tc.client(PlanService);
    const plan = await plans
      .startPlan({
        template: quickSpec(NEWER, [100], {
          failureThresholdPercent: 0,
          disruptionBudgetPercent: 100,
        }),
        groups: ["dev", "staging", "prod"].map((pool) => ({
          name: pool,
          selector: { pools: [pool] },
        })),
        wait: { seconds: 1n, nanos: 0 },
      })
      .then((answer) => answer.plan as RolloutPlan);
    expect(plan.phase).toBe("running");
    const deadline = Date.now() + 60_000;
    const show = async () => (await plans.getPlan({ id: plan.id })).plan as RolloutPlan;
    let shown = await show();
    while (shown.phase === "running") {
      if (Date.now() > deadline) throw new Error(`plan still running: ${shown.message}`);
      await new Promise((r) => setTimeout(r, 100));
      shown = await show();
    }
    expect(shown.phase).toBe("halted");
    expect(shown.groups.map((g) => g.outcome)).toEqual(["completed", "breached", ""]);
    expect(shown.groups[2]?.campaignId).toBe("");
    expect(shown.message).toContain('group "staging" breached');
    const [dev, staging] = shown.groups;
    const devEnded = Number(dev?.endedAt?.seconds) * 1000 + (dev?.endedAt?.nanos ?? 0) / 1e6;
    const stagingStarted =
      Number(staging?.startedAt?.seconds) * 1000 + (staging?.startedAt?.nanos ?? 0) / 1e6;
    expect(stagingStarted - devEnded).toBeGreaterThanOrEqual(1000);
    for (const a of fleets.get("dev")?.agents ?? []) expect(a.version).toBe(NEWER);
    for (const a of fleets.get("prod")?.agents ?? []) expect(a.version).toBe(OLD);
    const halted = await fx.audit.listAuditEvents({ campaignId: plan.id, action: "plan.halt" });
    expect(halted.events).toHaveLength(1);
    // Nothing more happens to the halted plan.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await show()).groups[2]?.campaignId).toBe("");
    for (const a of fleets.get("prod")?.agents ?? []) expect(a.version).toBe(OLD);
  });
  it("agentctl (in process) sets, lists and clears a desired version, and starts, shows and aborts a plan", async () => {
    const env = { AGENTCTL_SERVER: fx.tc.adminUrl, AGENTCTL_TOKEN: fx.tc.operatorToken };
    // The CLI in process (its real code, over HTTP to the real Control).
    const agentctl = (argv: string[]) => runCli(argv, { env });
    const set = await agentctl([
      "desired",
      "set",
      "--version",
      NEWER,
      "--pool",
      "solo",
      "--reason",
      "pin solo",
      "--yes",
    ]);
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    const id = /desired version (d-[0-9a-f]{10}) set: pool=solo → 3\.0\.0/.exec(set.stdout)?.[1];
    expect(id).toBeDefined();
    const listed = await agentctl(["desired", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+3\\.0\\.0\\s+pool=solo\\s+0/0`));
    const bad = await agentctl(["desired", "set", "--version", "9.9.9", "--pool", "solo", "--yes"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("release 9.9.9 is not registered");
    expect((await agentctl(["desired", "clear", id ?? "", "--yes"])).code).toBe(0);
    expect((await agentctl(["desired", "list"])).stdout).not.toContain(id);

    const started = await agentctl([
      "plan",
      "start",
      "--version",
      NEWER,
      "--groups",
      "nobody1,nobody2",
      "--batches",
      "100:0s",
      "--wait",
      "1h",
      "--yes",
    ]);
    expect(started.stderr).toBe("");
    const planId = /plan (p-[0-9a-z-]+) started/.exec(started.stdout)?.[1] ?? "";
    expect(planId).not.toBe("");
    // The first group has no node: it counts as done, and the plan waits an hour for the next.
    const deadline = Date.now() + 15_000;
    let shown = await agentctl(["plan", "show", planId]);
    while (!shown.stdout.includes("NEXT GROUP AT") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      shown = await agentctl(["plan", "show", planId]);
    }
    expect(shown.stdout).toContain("NEXT GROUP AT");
    expect(shown.stdout).toMatch(/1\s+nobody1\s+nobody1\s+-\s+\S+.*empty/);
    const aborted = await agentctl(["plan", "abort", planId, "--reason", "not today", "--yes"]);
    expect(aborted.stdout).toBe(`plan ${planId} aborted\n`);
    expect((await agentctl(["plan", "list"])).stdout).toMatch(new RegExp(`${planId}\\s+aborted`));
  });
});
