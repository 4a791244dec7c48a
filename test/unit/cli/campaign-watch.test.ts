import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  exitCodeFor,
  progressBar,
  renderFrame,
  renderLine,
  terminalWidth,
} from "../../../cli/commands/campaign-watch.js";
import { createPainter, ESC, stripAnsi } from "../../../cli/output.js";
import {
  BatchState,
  type Campaign,
  CampaignNodeSchema,
  CampaignPhase,
  CampaignSchema,
  NodeState,
  NodeStateCountSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

const plain = createPainter(false);

function campaign(
  phase: CampaignPhase,
  batch2: Partial<{ failed: number; state: BatchState }> = {},
): Campaign {
  const failed = batch2.failed ?? 0;
  return create(CampaignSchema, {
    id: "c1",
    phase,
    currentBatch: 1,
    nodeCount: 20,
    spec: { targetVersion: "1.2.0", failureThresholdPercent: 5 },
    counts: [
      { state: NodeState.SUCCEEDED, count: 4 },
      { state: NodeState.FAILED, count: failed },
      { state: NodeState.WAITING, count: 16 - failed },
    ],
    batches: [
      {
        index: 0,
        percent: 5,
        state: BatchState.PASSED,
        nodeCount: 1,
        offerable: 1,
        counts: [{ state: NodeState.SUCCEEDED, count: 1 }],
        minDuration: durationFromMs(30 * 60_000),
        elapsed: durationFromMs(31 * 60_000),
      },
      {
        index: 1,
        percent: 50,
        state: batch2.state ?? BatchState.RUNNING,
        nodeCount: 10,
        offerable: 10,
        failed,
        counts: [
          { state: NodeState.SUCCEEDED, count: 3 },
          { state: NodeState.FAILED, count: failed },
          { state: NodeState.APPLYING, count: 10 - 3 - failed },
        ],
        minDuration: durationFromMs(30 * 60_000),
        elapsed: durationFromMs(10 * 60_000),
      },
    ],
    ...(phase === CampaignPhase.ROLLED_BACK
      ? { code: "batch_failed", message: "2 of 10 nodes failed", stoppedByNodeId: "node-7" }
      : {}),
  });
}

describe("watch rendering", () => {
  it("draws one bar per batch with counts, failure ratio and time left", () => {
    const lines = renderFrame(campaign(CampaignPhase.RUNNING), 30_000, plain);
    expect(lines).toEqual([
      "campaign c1  agent 1.2.0  running  batch 2/2  20 node(s)",
      "  batch  1   5% [####################]      1/1  passed       0/1 failed (0.0% ≤ 5%)  succeeded=1",
      "> batch  2  50% [######--------------]     3/10  running      0/10 failed (0.0% ≤ 5%)  19m30s left  applying=7 succeeded=3",
    ]);
  });

  it("does not count paused time toward the batch", () => {
    const lines = renderFrame(campaign(CampaignPhase.PAUSED), 30_000, plain);
    expect(lines[2]).toContain("20m left (paused)");
  });

  it("says which node stopped the campaign and why", () => {
    const lines = renderFrame(
      campaign(CampaignPhase.ROLLED_BACK, { failed: 2, state: BatchState.ROLLED_BACK }),
      0,
      plain,
    );
    expect(lines[2]).toContain("2/10 failed (20.0% > 5%)");
    expect(lines.at(-1)).toBe(
      "stopped: batch_failed: 2 of 10 nodes failed (stopped by node node-7)",
    );
  });

  it("colours the bar only when asked", () => {
    const batch = campaign(CampaignPhase.RUNNING).batches[1]!;
    expect(progressBar(batch, createPainter(true), 10)).toContain(`${ESC}[32m`);
    expect(stripAnsi(progressBar(batch, createPainter(true), 10))).toBe(
      progressBar(batch, plain, 10),
    );
  });

  it.each([
    [100, undefined, 100],
    [0, "160", 160],
    [undefined, undefined, 120],
    [0, "wide", 120],
  ])("uses %s columns (COLUMNS=%s) as width %i, never 0", (columns, env, width) => {
    expect(terminalWidth(columns, env)).toBe(width);
  });

  it("prints one plain line per update when not on a terminal", () => {
    expect(renderLine(campaign(CampaignPhase.RUNNING), new Date("2025-03-01T12:00:00Z"))).toBe(
      "2025-03-01T12:00:00.000Z  campaign c1  running  batch 2/2  waiting=16 succeeded=4  current batch 0/10 failed (0.0% ≤ 5%), 20m left",
    );
  });

  it.each([
    ["completed", CampaignPhase.COMPLETED, 0],
    ["rolled_back", CampaignPhase.ROLLED_BACK, 3],
    ["aborted", CampaignPhase.ABORTED, 3],
    ["failed", CampaignPhase.FAILED, 3],
  ])("a watch that ended %s exits with the code for it", (_name, phase, code) => {
    expect(exitCodeFor(phase)).toBe(code);
  });
});

describe("campaign watch against a streaming server", () => {
  let fake: FakeControl;
  let env: Record<string, string>;

  beforeAll(async () => {
    fake = await startFakeControl();
    env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "viewer-token" };
  });

  afterAll(async () => {
    await fake.stop();
  });

  it("prints a line per update and exits 0 when the campaign completed", async () => {
    const done = campaign(CampaignPhase.COMPLETED, { state: BatchState.PASSED });
    done.finishedAt = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: 0 };
    fake.state.watchUpdates = [campaign(CampaignPhase.RUNNING), done];
    fake.state.watchHang = false;
    const result = await runCli(["campaign", "watch", "c1"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split("\n")).toHaveLength(2);
    expect(result.stdout).toContain("completed");
  });

  it("prints a line per phase or batch change, not per node change", async () => {
    const progress = (succeeded: number) => {
      const c = campaign(CampaignPhase.RUNNING);
      c.counts = [
        create(NodeStateCountSchema, { state: NodeState.SUCCEEDED, count: succeeded }),
        create(NodeStateCountSchema, { state: NodeState.WAITING, count: 20 - succeeded }),
      ];
      return c;
    };
    const done = campaign(CampaignPhase.COMPLETED, { state: BatchState.PASSED });
    done.finishedAt = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: 0 };
    fake.state.watchUpdates = [progress(4), progress(5), progress(6), progress(7), done];
    fake.state.watchHang = false;
    const result = await runCli(["campaign", "watch", "c1"], { env });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("running  batch 2/2  waiting=16 succeeded=4");
    expect(lines[1]).toContain("completed");

    const json = await runCli(["campaign", "watch", "c1", "--json"], { env });
    expect(json.stdout.trim().split("\n")).toHaveLength(2);
  });

  it("adds a line per node change with --events, naming node, batch, states and why", async () => {
    const done = campaign(CampaignPhase.COMPLETED, { state: BatchState.PASSED });
    done.finishedAt = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: 0 };
    fake.state.watchUpdates = [campaign(CampaignPhase.RUNNING), done];
    fake.state.campaignNodes = [
      create(CampaignNodeSchema, { nodeId: "n1", batch: 0, state: NodeState.SUCCEEDED }),
      create(CampaignNodeSchema, {
        nodeId: "n2",
        batch: 1,
        state: NodeState.FAILED,
        code: "apply_failed",
        message: "exit 3",
      }),
      create(CampaignNodeSchema, { nodeId: "n3", batch: 1, state: NodeState.WAITING }),
    ];
    const result = await runCli(["campaign", "watch", "c1", "--events"], { env });
    fake.state.campaignNodes = [];
    expect(result.code).toBe(0);
    const events = result.stdout.split("\n").filter((l) => l.includes("  node "));
    expect(events.map((l) => l.replace(/^\S+ {2}/, ""))).toEqual([
      "node n1  batch 1  waiting → succeeded",
      "node n2  batch 2  waiting → failed  apply_failed: exit 3",
    ]);
  });

  it("writes node events above the frame on a terminal, the frame redrawn below them", async () => {
    const done = campaign(CampaignPhase.COMPLETED, { state: BatchState.PASSED });
    done.finishedAt = { $typeName: "google.protobuf.Timestamp", seconds: 1n, nanos: 0 };
    fake.state.watchUpdates = [campaign(CampaignPhase.RUNNING), done];
    fake.state.campaignNodes = [
      create(CampaignNodeSchema, { nodeId: "n1", batch: 0, state: NodeState.SUCCEEDED }),
    ];
    const result = await runCli(["campaign", "watch", "c1", "--events"], { env, tty: true });
    fake.state.campaignNodes = [];
    expect(result.code).toBe(0);
    const plain = stripAnsi(result.stdout);
    expect(plain).toMatch(/ {2}node n1 {2}batch 1 {2}waiting → succeeded\ncampaign c1 /);
    // The event is written once, not redrawn with every frame.
    expect(plain.match(/node n1 /g)).toHaveLength(1);
  });

  it("exits 3 with the stop reason when the campaign was rolled back", async () => {
    fake.state.watchUpdates = [
      campaign(CampaignPhase.RUNNING),
      campaign(CampaignPhase.ROLLED_BACK, { failed: 2, state: BatchState.ROLLED_BACK }),
    ];
    const result = await runCli(["campaign", "watch", "c1"], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      "agentctl: campaign c1 ended rolled_back: batch_failed: 2 of 10 nodes failed (stopped by node node-7)\n",
    );
  });

  it("redraws in place on a terminal", async () => {
    fake.state.watchUpdates = [
      campaign(CampaignPhase.RUNNING),
      campaign(CampaignPhase.ROLLED_BACK, { failed: 2, state: BatchState.ROLLED_BACK }),
    ];
    const result = await runCli(["campaign", "watch", "c1"], { env, tty: true });
    expect(result.code).toBe(3);
    // The second frame moves the cursor up over the 3 lines of the first one.
    expect(result.stdout).toContain(`${ESC}[3F${ESC}[J`);
  });

  it("prints one JSON message per line with --json", async () => {
    fake.state.watchUpdates = [campaign(CampaignPhase.RUNNING), campaign(CampaignPhase.ABORTED)];
    const result = await runCli(["campaign", "watch", "c1", "--json"], { env });
    const lines = result.stdout.trim().split("\n");
    expect(
      lines.map((l) => (JSON.parse(l) as { campaign: { phase: string } }).campaign.phase),
    ).toEqual(["running", "aborted"]);
    expect(result.code).toBe(3);
  });

  it("stops on abort (Ctrl-C) with exit 130", async () => {
    fake.state.watchUpdates = [campaign(CampaignPhase.RUNNING)];
    fake.state.watchHang = true;
    const controller = new AbortController();
    const result = await runCli(["campaign", "watch", "c1"], {
      env,
      signal: controller.signal,
      onStdout: () => controller.abort(),
    });
    fake.state.watchHang = false;
    expect(result).toMatchObject({ code: 130, stderr: "agentctl: interrupted\n" });
  });
});
