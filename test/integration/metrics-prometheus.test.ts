/**
 * Control's metrics as a real Prometheus sees them: Debian's `prometheus` scrapes a running
 * Control every second with docs/monitoring/alerts.yml loaded, while simulated agents go
 * through a held campaign, an aborted one and one that breaches; the test asks Prometheus's
 * HTTP API for the series and the alerts. `promtool` checks the rules and lints a scrape.
 * Without Prometheus installed this test fails: `.ci/run` installs it.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { status as grpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CampaignPhase,
  NodeState,
  OnBreach,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { PROMETHEUS, PROMTOOL, type Prometheus, startPrometheus } from "../helpers/prometheus.js";
import { eventually, hello, openRawStream } from "../helpers/raw-agent.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  quickSpec,
  waitForCampaign,
} from "./campaign-fixture.js";

const ALERTS = resolve("docs/monitoring/alerts.yml");
const DASHBOARD = resolve("docs/monitoring/grafana-dashboard.json");
const AGENTS = 4;
const run = promisify(execFile);

describe("metrics scraped by a real Prometheus", { timeout: 120_000 }, () => {
  let fx: CampaignFixture;
  let prometheus: Prometheus | undefined;
  let dir: string;

  const api = (path: string) => (prometheus as Prometheus).api(path);
  const query = (expr: string) => (prometheus as Prometheus).query(expr);
  const settled = (expr: string, check: (value: number) => boolean) =>
    (prometheus as Prometheus).settled(expr, check);

  beforeAll(async () => {
    for (const binary of [PROMETHEUS, PROMTOOL]) {
      if (!existsSync(binary)) {
        throw new Error(`${binary} is missing: install Debian's prometheus package (.ci/run does)`);
      }
    }
    dir = await mkdtemp(join(tmpdir(), "agent-control-prometheus-"));
    // Batches of whole nodes in a fleet of 4: a canary batch of up to half of it.
    fx = await campaignFixture({
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 50 },
    });
    await fx.register(NEW);
    await fx.register(NEWER);
    await fx.fleet({ count: AGENTS, failVersions: [NEWER] });
    prometheus = await startPrometheus(new URL(fx.tc.adminUrl).host, dir, [ALERTS]);
  }, 120_000);
  afterAll(async () => {
    await prometheus?.stop();
    await fx?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("scrapes Control: its target is up, build_info and the process collectors are there, streams held equal the agents", async () => {
    await settled('up{job="agent-control"}', (v) => v === 1);
    const [info] = await query("agent_control_build_info");
    expect(info?.value).toBe(1);
    expect(info?.metric.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info?.metric.node_version).toBe(process.version.slice(1));
    expect(await settled("process_resident_memory_bytes", (v) => v > 0)).toBeGreaterThan(1e6);
    await settled("nodejs_heap_size_used_bytes", (v) => v > 0);
    expect(await settled("agent_control_streams", (v) => v === AGENTS)).toBe(AGENTS);
    expect(await settled("agent_control_streams_held", (v) => v === AGENTS)).toBe(AGENTS);
    await settled('agent_control_handshakes_total{result="welcomed"}', (v) => v >= AGENTS);
    await settled("agent_control_handshakes_in_flight", (v) => v === 0);
    const intruder = openRawStream(fx.tc.agentAddress, "not-a-credential-of-this-control");
    intruder.send(hello("intruder-1"));
    expect((await intruder.ended).code).toBe(grpcStatus.UNAUTHENTICATED);
    intruder.channel.close();
    await settled('agent_control_handshakes_total{result="unauthenticated"}', (v) => v === 1);
    await settled('agent_control_streams_refused_total{reason="max_streams"}', (v) => v === 0);
    await settled("agent_control_is_leader", (v) => v === 1);
    await settled('sum(agent_control_nodes{online="true"})', (v) => v === AGENTS);
    await settled('sum(agent_control_nodes{online="false"})', (v) => v === 0);
  });

  it("shows a running campaign's phase, batch and nodes by state, and the operations and reports it caused", async () => {
    const spec = quickSpec(NEW, [25, 100], { disruptionBudgetPercent: 100 });
    // The first batch holds the campaign for an hour, its node verifying, the others waiting.
    const first = spec.batches?.[0];
    if (first) first.minDuration = { seconds: 3600n, nanos: 0 };
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    await waitForCampaign(fx.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 1),
    );
    const of = `campaign="${id}"`;
    await settled(`agent_control_campaign_phase{${of},phase="running"}`, (v) => v === 1);
    await settled(`agent_control_campaign_current_batch{${of}}`, (v) => v === 0);
    await settled(`agent_control_campaign_nodes{${of},state="verifying"}`, (v) => v === 1);
    await settled(`agent_control_campaign_nodes{${of},state="waiting"}`, (v) => v === AGENTS - 1);
    const changed = await settled(
      `agent_control_campaign_last_change_timestamp_seconds{${of}}`,
      (v) => v > 0,
    );
    expect(Math.abs(changed - Date.now() / 1000)).toBeLessThan(120);
    await settled('agent_control_operations_sent_total{kind="upgrade"}', (v) => v >= 1);
    await settled('agent_control_reports_total{phase="applying"}', (v) => v >= 1);
    await settled('agent_control_campaign_decisions_total{result="committed"}', (v) => v > 0);
    await settled("agent_control_campaign_decision_duration_seconds_count", (v) => v > 0);

    await fx.campaigns.abortCampaign({ id, reason: "metrics test" });
    const aborted = await waitForCampaign(fx.campaigns, id);
    expect(aborted.phase).toBe(CampaignPhase.ABORTED);
    await settled('agent_control_campaigns_finished_total{phase="aborted"}', (v) => v === 1);
    // Finished campaigns leave the gauges.
    await eventually(
      async () => (await query(`agent_control_campaign_phase{${of}}`)).length === 0,
      15_000,
      "the aborted campaign's phase series gone",
    );
  });

  it("counts a breach and its rollback, and the breach alert fires", async () => {
    const spec = quickSpec(NEWER, [50, 100], { disruptionBudgetPercent: 100 });
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    await settled('agent_control_campaign_breaches_total{cause="failures"}', (v) => v === 1);
    await settled('agent_control_campaign_rollbacks_total{cause="breach"}', (v) => v === 1);
    await settled('agent_control_campaigns_finished_total{phase="rolled_back"}', (v) => v === 1);
    await settled('agent_control_reports_total{phase="failed"}', (v) => v >= 1);
    await eventually(
      async () => {
        const { alerts } = (await api("/api/v1/alerts")) as {
          alerts: { labels: { alertname: string }; state: string }[];
        };
        const names = alerts.filter((a) => a.state === "firing").map((a) => a.labels.alertname);
        return (
          names.includes("AgentControlCampaignBreached") &&
          names.includes("AgentControlCampaignFailed")
        );
      },
      15_000,
      "the breach and failed-campaign alerts firing",
    );
    const { alerts } = (await api("/api/v1/alerts")) as {
      alerts: { labels: { alertname: string } }[];
    };
    const names = alerts.map((a) => a.labels.alertname);
    // A healthy Control with a leader and its agents online raises none of these.
    for (const quiet of [
      "AgentControlNoLeader",
      "AgentControlManyNodesOffline",
      "AgentControlStreamsNearLimit",
      "AgentControlDown",
    ]) {
      expect(names).not.toContain(quiet);
    }
  });

  it("names the campaign in the breach alert, from the live-campaign gauges", async () => {
    // On breach it pauses, so it stays live (a rollback can end between two scrapes: the
    // alert then fires without a name, as the test above may see).
    const spec = quickSpec(NEWER, [50, 100], {
      disruptionBudgetPercent: 100,
      onBreach: OnBreach.PAUSE,
    });
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    await waitForCampaign(fx.campaigns, id, (c) => c.phase === CampaignPhase.PAUSED);
    type Alert = {
      labels: { alertname: string; campaign?: string };
      annotations: { summary: string; description: string };
      state: string;
    };
    let breached: Alert[] = [];
    await eventually(
      async () => {
        const { alerts } = (await api("/api/v1/alerts")) as { alerts: Alert[] };
        breached = alerts.filter(
          (a) => a.labels.alertname === "AgentControlCampaignBreached" && a.state === "firing",
        );
        return breached.some((a) => a.labels.campaign === id);
      },
      15_000,
      "the breach alert naming the paused campaign",
    );
    expect(breached.map((a) => a.labels.campaign)).toEqual([id]);
    expect(breached[0]?.annotations.summary).toBe(`Campaign ${id}: a batch breached`);
    expect(breached[0]?.annotations.description).toContain(`agentctl campaign show ${id}`);
    await fx.campaigns.abortCampaign({ id, reason: "metrics test" });
    await waitForCampaign(fx.campaigns, id);
  });

  it("loads every rule of docs/monitoring/alerts.yml with health ok", async () => {
    const { groups } = (await api("/api/v1/rules")) as {
      groups: { name: string; rules: { name: string; type: string; health: string }[] }[];
    };
    const rules = groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        "AgentControlCampaignBreached",
        "AgentControlCampaignStuck",
        "AgentControlCampaignStalled",
        "AgentControlNoLeader",
        "AgentControlLeadershipLost",
        "AgentControlManyNodesOffline",
        "AgentControlStreamsNearLimit",
        "AgentControlStreamsRefused",
      ]),
    );
    for (const rule of rules) {
      expect({ rule: rule.name, type: rule.type, health: rule.health }).toEqual({
        rule: rule.name,
        type: "alerting",
        health: "ok",
      });
    }
  });

  it("answers every query of the Grafana dashboard, with data for the fleet and the Controls", async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, "utf8")) as {
      panels: { title: string; targets?: { expr: string }[] }[];
      annotations: { list: { expr: string }[] };
    };
    const queries = [
      ...dashboard.panels.flatMap((p) =>
        (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })),
      ),
      ...dashboard.annotations.list.map((a) => ({ title: "annotation", expr: a.expr })),
    ];
    expect(queries.length).toBeGreaterThan(20);
    const empty: string[] = [];
    for (const { title, expr } of queries) {
      const concrete = expr
        .replaceAll("$__rate_interval", "1m")
        .replaceAll("$instance", ".*")
        .replaceAll("$campaign", ".*");
      // Throws on a query Prometheus cannot parse or evaluate.
      const result = await query(concrete).catch((error: unknown) => {
        throw new Error(`panel "${title}": ${(error as Error).message}`);
      });
      if (result.length === 0) empty.push(title);
    }
    // With agents connected and campaigns decided, the panels of the fleet and of Control
    // have data (those of unfinished campaigns and of the leader may be empty now).
    for (const title of [
      "Nodes online",
      "Leader",
      "Agent streams per Control",
      "Handshakes by result",
      "Operations sent by kind",
      "Reports by phase",
      "Decisions by result",
      "Decision duration",
      "Process",
      "Build",
    ]) {
      expect(empty).not.toContain(title);
    }
  });

  it("passes promtool's rule check and its lint of a scrape", async () => {
    const rules = await run(PROMTOOL, ["check", "rules", ALERTS]);
    expect(rules.stdout).toMatch(/SUCCESS: \d+ rules found/);
    const scrape = await (await fetch(`${fx.tc.adminUrl}/metrics`)).text();
    const lint = spawn(PROMTOOL, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    lint.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    lint.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const code = new Promise<number | null>((r) => lint.once("exit", r));
    lint.stdin.end(scrape);
    await code;
    // prom-client's default collectors name three gauges `*_total`; Control's own names pass.
    const problems = out.split("\n").filter((line) => line !== "");
    expect(problems).toEqual([
      'nodejs_active_handles_total non-counter metrics should not have "_total" suffix',
      'nodejs_active_requests_total non-counter metrics should not have "_total" suffix',
      'nodejs_active_resources_total non-counter metrics should not have "_total" suffix',
    ]);
    expect(scrape).toMatch(/^agent_control_build_info\{/m);
  });
});
