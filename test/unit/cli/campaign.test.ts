import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  CampaignNodeSchema,
  CampaignPhase,
  CampaignSchema,
  NodeState,
  NodeStateCountSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { CampaignWaitSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_waits_pb.js";
import { NodeSchema } from "../../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

let fake: FakeControl;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeControl({
    nodes: ["n1", "n2", "n3", "n4"].map((nodeId) => create(NodeSchema, { nodeId })),
  });
  env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "operator-token" };
});

beforeEach(() => {
  fake.state.campaigns = [];
  fake.state.campaignNodes = [];
});

afterAll(async () => {
  await fake.stop();
});

describe("campaign plan and start", () => {
  it("prints the plan as a table of batches", async () => {
    const result = await runCli(["campaign", "plan", "--version", "1.2.0"], { env });
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "Plan for agent 1.2.0: 4 node(s) in 2 batch(es)",
        "BATCH  PERCENT  NODES  TOLERATES  MIN DURATION  NODES IN ORDER",
        "1      50%      2      0          default       n1,n2",
        "2      100%     2      0          default       n3,n4",
        "Batch 1 tolerates no failure: its first failed node breaches the 5% threshold (a larger first batch or a higher --threshold absorbs one)",
        "",
      ].join("\n"),
    });
  });

  it("says how many nodes the plan skips for a platform the release lacks, and why", async () => {
    const result = await runCli(["campaign", "plan", "--version", "1.3.0"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "2 node(s) will be skipped platform_unsupported (release 1.3.0 has no artifact for linux-arm64): n2,n4\n",
    );
  });

  it("sends the spec the flags describe and prints only the id on stdout", async () => {
    const result = await runCli(
      [
        "campaign",
        "start",
        "--version",
        "1.2.0",
        "--batches",
        "50:1m,100:1m",
        "--threshold",
        "0",
        "--on-breach",
        "stop",
        "--yes",
      ],
      { env },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("c1\n");
    expect(result.stderr).toContain("follow it with: agentctl campaign watch c1");
    const spec = fake.state.campaigns[0]?.spec;
    expect(spec?.targetVersion).toBe("1.2.0");
    expect(spec?.failureThresholdPercent).toBe(0);
    expect(spec?.batches.map((b) => b.percent)).toEqual([50, 100]);
  });

  it("without a terminal starts nothing unless --yes is given, and says why in one line", async () => {
    fake.state.calls = [];
    const refused = await runCli(["campaign", "start", "--version", "1.2.0"], { env, stdin: "" });
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "agentctl: not started: no terminal to confirm on; pass --yes to start without confirmation\n",
    });
    expect(fake.state.calls).toEqual([]);
    expect(fake.state.campaigns).toHaveLength(0);
    const started = await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], {
      env,
      stdin: "",
    });
    expect(started.code).toBe(0);
    expect(fake.state.campaigns).toHaveLength(1);
  });

  it("on a terminal shows the plan and starts only after y", async () => {
    const result = await runCli(["campaign", "start", "--version", "1.2.0"], {
      env,
      tty: true,
      stdin: "y\n",
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("Plan for agent 1.2.0: 4 node(s) in 2 batch(es)");
    expect(result.stderr).toContain("Start upgrading 4 node(s) to 1.2.0? [y/N] ");
    expect(fake.state.campaigns).toHaveLength(1);
  });

  it.each(["n\n", "\n", ""])(
    "on a terminal starts nothing when the answer is %j",
    async (answer) => {
      const result = await runCli(["campaign", "start", "--version", "1.2.0"], {
        env,
        tty: true,
        stdin: answer,
      });
      expect(result.code).toBe(1);
      expect(result.stderr.endsWith("agentctl: not started: not confirmed\n")).toBe(true);
      expect(fake.state.campaigns).toHaveLength(0);
    },
  );

  it("does not ask on a terminal with --yes", async () => {
    const result = await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], {
      env,
      tty: true,
      stdin: "",
    });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("[y/N]");
  });
});

describe("campaign list, show and pause", () => {
  it("lists campaigns as a table", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], { env });
    const result = await runCli(["campaign", "list"], { env });
    expect(result.stdout.split("\n")[0]).toMatch(
      /^ID +PHASE +VERSION +BATCH +NODES +SUCCEEDED +FAILED +CREATED +BY$/,
    );
    expect(result.stdout).toMatch(/^c1 +running +1\.2\.0 +1\/2 +4 +0 +0 +- +token:admin$/m);
  });

  it("shows a summary and the batches", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--reason", "CVE fix", "--yes"], {
      env,
    });
    const result = await runCli(["campaign", "show", "c1"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Phase: +running$/m);
    expect(result.stdout).toMatch(/^Reason: +CVE fix$/m);
    expect(result.stdout).toMatch(/^BATCH +PERCENT +STATE +NODES +FAILURES/m);
  });

  it("pauses a campaign and prints its new phase", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], { env });
    const result = await runCli(["campaign", "pause", "c1", "--reason", "lunch", "--yes"], { env });
    expect(result).toEqual({ code: 0, stdout: "campaign c1 paused; phase paused\n", stderr: "" });
    const json = await runCli(["campaign", "pause", "c1", "--json", "--yes"], { env });
    expect((JSON.parse(json.stdout) as { campaign: { phase: string } }).campaign.phase).toBe(
      "paused",
    );
  });

  it("aborts a campaign and prints its new phase, and for a convergence campaign that its desired version is halted", async () => {
    fake.state.campaigns.push(
      create(CampaignSchema, { id: "c9", createdBy: "alice", phase: CampaignPhase.RUNNING }),
      create(CampaignSchema, {
        id: "d-3f9a1c07e2-4",
        createdBy: "convergence:d-3f9a1c07e2",
        phase: CampaignPhase.RUNNING,
      }),
    );
    expect(await runCli(["campaign", "abort", "c9", "--yes"], { env })).toEqual({
      code: 0,
      stdout: "campaign c9 aborted; phase aborted\n",
      stderr: "",
    });
    expect(await runCli(["campaign", "abort", "d-3f9a1c07e2-4", "--yes"], { env })).toEqual({
      code: 0,
      stdout:
        "campaign d-3f9a1c07e2-4 aborted; phase aborted\n" +
        "convergence of the desired version d-3f9a1c07e2 is halted: it starts no new campaign until `agentctl desired set` sets it again\n",
      stderr: "",
    });
  });

  it("pages through every node row with ListCampaignNodes, filtered by --state", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], { env });
    fake.state.campaignNodes = Array.from({ length: 2500 }, (_, i) =>
      create(CampaignNodeSchema, {
        nodeId: `node-${String(i).padStart(4, "0")}`,
        order: i,
        batch: i < 100 ? 0 : 1,
        state: i % 10 === 0 ? NodeState.FAILED : NodeState.WAITING,
        pool: "eu",
      }),
    );
    fake.state.calls = [];
    const wide = await runCli(["campaign", "show", "c1", "--nodes", "-o", "wide"], { env });
    expect(wide.code).toBe(0);
    expect(fake.state.calls.map((c) => c.method)).toEqual([
      "GetCampaign",
      "ListCampaignNodes",
      "ListCampaignNodes",
      "ListCampaignNodes",
    ]);
    expect(wide.stdout).toMatch(/^NODE +BATCH +STATE +VERSION +CODE +MESSAGE +PREVIOUS +POOL /m);
    expect(wide.stdout.match(/^node-\d{4} /gm)).toHaveLength(2500);
    expect(wide.stdout).toMatch(/^node-2499 +2 +waiting +- +- +- +- +eu /m);

    const failed = await runCli(["campaign", "show", "c1", "--state", "failed", "--json"], {
      env,
    });
    const json = JSON.parse(failed.stdout) as { nodes: { state: string }[] };
    expect(json.nodes).toHaveLength(250);
    expect(new Set(json.nodes.map((n) => n.state))).toEqual(new Set(["failed"]));

    const bad = await runCli(["campaign", "show", "c1", "--state", "broken"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^agentctl: invalid value "broken" for --state: expected waiting, /);
  });

  it("shows a summary by default: counts, waits and the first failed nodes by name, no node rows", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], { env });
    const c1 = fake.state.campaigns[0]!;
    c1.nodeCount = 2500;
    c1.counts = [
      create(NodeStateCountSchema, { state: NodeState.WAITING, count: 2250 }),
      create(NodeStateCountSchema, { state: NodeState.FAILED, count: 240 }),
      create(NodeStateCountSchema, { state: NodeState.TIMED_OUT, count: 10 }),
    ];
    fake.state.campaignNodes = Array.from({ length: 2500 }, (_, i) =>
      create(CampaignNodeSchema, {
        nodeId: `node-${String(i).padStart(4, "0")}`,
        batch: 1,
        state: i % 10 === 0 ? NodeState.FAILED : NodeState.WAITING,
        ...(i % 10 === 0 ? { code: "apply_failed", message: "exit 3" } : {}),
      }),
    );
    fake.state.waits = [
      create(CampaignWaitSchema, { kind: "min_duration", text: "minimum duration: 12 min left" }),
    ];
    fake.state.calls = [];
    const shown = await runCli(["campaign", "show", "c1"], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout.split("\n").length).toBeLessThan(60);
    expect(shown.stdout).toMatch(/^Nodes: +2500: waiting=2250 failed=240 timed_out=10$/m);
    expect(shown.stdout).toContain("Waits for:\n  - minimum duration: 12 min left\n");
    expect(shown.stdout).toContain("Failures: 250\n");
    expect(shown.stdout).toMatch(/^ {2}node-0000 +failed +apply_failed +exit 3$/m);
    expect(shown.stdout.match(/^ {2}node-\d{4} /gm)).toHaveLength(5);
    expect(shown.stdout).toContain(
      "  … and 245 more: agentctl campaign show c1 --state failed,timed_out,rollback_failed\n",
    );
    expect(shown.stdout).toContain("Every node: agentctl campaign show c1 --nodes\n");
    expect(shown.stdout).not.toMatch(/^NODE /m);
    expect(fake.state.calls.map((c) => c.method)).toEqual([
      "GetCampaign",
      "ListCampaignNodes",
      "GetCampaignWaits",
    ]);

    const json = JSON.parse((await runCli(["campaign", "show", "c1", "--json"], { env })).stdout);
    expect(json.nodes).toEqual([]);
  });

  it("takes --state as a comma list or repeated", async () => {
    await runCli(["campaign", "start", "--version", "1.2.0", "--yes"], { env });
    fake.state.campaignNodes = [NodeState.FAILED, NodeState.TIMED_OUT, NodeState.SUCCEEDED].map(
      (state, i) => create(CampaignNodeSchema, { nodeId: `n${i}`, state }),
    );
    for (const flags of [
      ["--state", "failed,timed_out"],
      ["--state", "failed", "--state", "timed_out"],
    ]) {
      const shown = await runCli(["campaign", "show", "c1", ...flags], { env });
      expect(shown.stdout.match(/^n\d /gm)).toEqual(["n0 ", "n1 "]);
    }
  });

  it("passes NOT_FOUND through", async () => {
    const result = await runCli(["campaign", "show", "nope"], { env });
    expect(result).toEqual({ code: 1, stdout: "", stderr: "agentctl: campaign nope not found\n" });
  });
});
