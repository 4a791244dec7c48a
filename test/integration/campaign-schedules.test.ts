/**
 * Maintenance windows and outside health gates, black-box: a real Control (PostgreSQL, admin
 * API, simulated agents over real streams), a window computed from the wall clock, and a real
 * Prometheus (Debian's) scraping a metric this test serves and flips.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Fleet } from "../../agent-sim/index.js";
import {
  BatchState,
  CampaignPhase,
  NodeState,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { freePort } from "../helpers/process-fixtures.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  nodesByState,
  quickSpec,
  type SpecInit,
  waitForCampaign,
} from "./campaign-fixture.js";

const PROMETHEUS = "/usr/bin/prometheus";
const NEWEST = "4.0.0";
const hhmm = (d: Date) =>
  `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;

/** A tiny endpoint serving `app_healthy <value>` in the Prometheus text format. */
async function metricEndpoint() {
  let value = 1;
  const server: Server = createServer((_req, res) => {
    res.setHeader("content-type", "text/plain; version=0.0.4");
    res.end(`# TYPE app_healthy gauge\napp_healthy ${value}\n`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    target: `127.0.0.1:${port}`,
    set(v: number) {
      value = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Prometheus scraping `target` every second, on a free port and a data dir of its own. */
async function startPrometheus(target: string, dir: string) {
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  await writeFile(
    config,
    `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: app\n    static_configs: [{ targets: [${JSON.stringify(target)}] }]\n`,
  );
  let output = "";
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while ((await fetch(`${url}/-/ready`).catch(() => undefined))?.status !== 200) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`prometheus not ready: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    /** The value of `app_healthy` as Prometheus has it now, if any. */
    async healthy(): Promise<string | undefined> {
      const res = await fetch(`${url}/api/v1/query?query=app_healthy`);
      const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
      return body.data.result[0]?.value[1];
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("maintenance windows and outside health gates", { timeout: 180_000 }, () => {
  let fx: CampaignFixture;
  let fleet: Fleet;
  let metric: Awaited<ReturnType<typeof metricEndpoint>>;
  let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  let dir: string;
  beforeAll(async () => {
    await access(PROMETHEUS).catch(() => {
      throw new Error(
        `${PROMETHEUS} is missing: install Debian's prometheus package (.ci/run does)`,
      );
    });
    dir = await mkdtemp(join(tmpdir(), "agent-control-gates-"));
    metric = await metricEndpoint();
    [fx, prometheus] = await Promise.all([
      campaignFixture({ policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 } }),
      startPrometheus(metric.target, dir),
    ]);
    await fx.register(NEW);
    await fx.register(NEWER);
    await fx.register(NEWEST);
    fleet = await fx.fleet({ count: 8 });
  }, 120_000);
  afterAll(async () => {
    await fx?.stop();
    await prometheus?.stop();
    await metric?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("offers nothing while its window is closed, and upgrades every node once it opens", async () => {
    // The next minute boundary at least 4 s away opens a two-minute daily window (UTC).
    const opens = new Date(Math.ceil((Date.now() + 4000) / 60_000) * 60_000);
    const closes = new Date(opens.getTime() + 2 * 60_000);
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [100], {
        disruptionBudgetPercent: 100,
        windows: [`daily ${hhmm(opens)}-${hhmm(closes)} UTC`],
      }),
    });
    const id = started.campaign?.id ?? "";
    expect(started.campaign?.spec?.windows).toEqual([`daily ${hhmm(opens)}-${hhmm(closes)} UTC`]);
    // Closed: every node waits, however often the worker decides (every 200 ms).
    while (Date.now() < opens.getTime() - 1000) {
      const byState = await nodesByState(fx.campaigns, id);
      expect([...byState.keys()]).toEqual(["waiting"]);
      for (const agent of fleet.agents) expect(Object.keys(agent.state.handled)).toEqual([]);
      await new Promise((r) => setTimeout(r, 500));
    }
    const done = await waitForCampaign(fx.campaigns, id, undefined, 75_000);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    expect(nodes.every((n) => n.state === NodeState.SUCCEEDED)).toBe(true);
    for (const agent of fleet.agents) expect(agent.version).toBe(NEW);
    for (const n of nodes) {
      const offered = n.offeredAt ? Number(n.offeredAt.seconds) * 1000 : 0;
      expect(offered).toBeGreaterThanOrEqual(opens.getTime());
    }
  });

  it("refuses a bad window, ramp or gate with the reason, and starts nothing", async () => {
    const before = (await fx.campaigns.listCampaigns({})).campaigns.length;
    const bad: [SpecInit, RegExp][] = [
      [{ windows: ["Mon 25:00-26:00"] }, /"25:00" is not a time/],
      [{ gates: ["prometheus ftp://x up"] }, /not an http\(s\) URL/],
      [{ ramp: { startPerMinute: 0, factor: 2 }, batches: [] }, /the ramp's rate must be above 0/],
    ];
    for (const [extra, message] of bad) {
      await expect(
        fx.campaigns.startCampaign({ spec: quickSpec(NEWER, [100], { ...extra }) }),
      ).rejects.toThrow(message);
    }
    expect((await fx.campaigns.listCampaigns({})).campaigns.length).toBe(before);
  });

  it("runs a ramp as steps of growing size, each a batch", async () => {
    const started = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEWER,
        disruptionBudgetPercent: 100,
        ramp: { startPerMinute: 60, factor: 2, step: { seconds: 2n, nanos: 0 } },
      },
    });
    const id = started.campaign?.id ?? "";
    expect(started.campaign?.batches.map((b) => b.nodeCount)).toEqual([2, 4, 2]);
    const done = await waitForCampaign(fx.campaigns, id, undefined, 60_000);
    expect(done.phase).toBe(CampaignPhase.COMPLETED);
    expect(done.batches.map((b) => b.state)).toEqual([
      BatchState.PASSED,
      BatchState.PASSED,
      BatchState.PASSED,
    ]);
    for (const b of done.batches)
      expect(Number(b.elapsed?.seconds ?? 0n)).toBeGreaterThanOrEqual(2);
    for (const agent of fleet.agents) expect(agent.version).toBe(NEWER);
  });

  it("rolls a batch back when its Prometheus gate stops holding, with the gate's value in the audit log", async () => {
    metric.set(1);
    await until(
      "Prometheus to scrape app_healthy 1",
      async () => (await prometheus?.healthy()) === "1",
    );
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEWEST, [50, 100], {
        disruptionBudgetPercent: 100,
        batches: [
          { percent: 50, minDuration: { seconds: 0n, nanos: 0 } },
          { percent: 100, minDuration: { seconds: 6n, nanos: 0 } },
        ],
        gates: [`prometheus ${prometheus?.url} app_healthy == 1`],
        gateGrace: { seconds: 30n, nanos: 0 },
      }),
    });
    const id = started.campaign?.id ?? "";
    // The first batch passes on the gate holding; then the metric goes bad.
    await waitForCampaign(fx.campaigns, id, (c) => c.currentBatch === 1, 30_000);
    metric.set(0);
    const done = await waitForCampaign(fx.campaigns, id, undefined, 60_000);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    expect(done.code).toBe("batch_failed");
    expect(done.message).toMatch(/gate 1 \(prometheus app_healthy\) of batch 2 failed/);
    expect(done.batches.map((b) => b.state)).toEqual([BatchState.PASSED, BatchState.ROLLED_BACK]);
    const { nodes } = await fx.campaigns.getCampaign({ id });
    const second = new Set(nodes.filter((n) => n.batch === 1).map((n) => n.nodeId));
    for (const agent of fleet.agents) {
      expect(agent.version).toBe(second.has(agent.nodeId) ? NEWER : NEWEST);
    }
    const { events } = await fx.audit.listAuditEvents({ campaignId: id });
    const gates = events.filter((e) => e.action === "gate").map((e) => JSON.parse(e.detailJson));
    expect(gates).toContainEqual(expect.objectContaining({ batch: 0, status: "pass", value: "1" }));
    expect(gates).toContainEqual(expect.objectContaining({ batch: 1, status: "fail", value: "0" }));
    expect(events.some((e) => e.action === "breach" && e.message.includes("gate 1 failed"))).toBe(
      true,
    );
  });
});
