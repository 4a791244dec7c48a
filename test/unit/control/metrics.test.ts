import { create } from "@bufbuild/protobuf";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import type { CampaignEvent } from "../../../control/campaign/index.js";
import { createLogger } from "../../../control/log.js";
import {
  agentMetrics,
  ControlMetrics,
  campaignMetrics,
  fleetGauges,
  operationKind,
} from "../../../control/metrics/index.js";
import {
  ObservedStateSchema,
  OperationPhase,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const log = createLogger({ level: "silent" });

/** The value of the series `series` (name and labels exactly as rendered), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("Control's metrics registry", () => {
  it("keeps two Controls in one process apart, each with its default collectors and build_info", async () => {
    const a = new ControlMetrics();
    const b = new ControlMetrics();
    agentMetrics(a).handshake("welcomed");
    agentMetrics(b);
    const [textA, textB] = [await a.render(), await b.render()];
    expect(sample(textA, 'agent_control_handshakes_total{result="welcomed"}')).toBe(1);
    expect(sample(textB, 'agent_control_handshakes_total{result="welcomed"}')).toBe(0);
    for (const text of [textA, textB]) {
      expect(text).toMatch(/^agent_control_build_info\{version="[^"]+",node_version="[^"]+"\} 1$/m);
      expect(text).toMatch(/^process_cpu_seconds_total /m);
      expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
    }
  });

  it("reads a gauge's callback at each scrape", async () => {
    const metrics = new ControlMetrics();
    let open = 3;
    metrics.gauge("agent_control_test_open", "Test.", () => open);
    expect(sample(await metrics.render(), "agent_control_test_open")).toBe(3);
    open = 5;
    expect(sample(await metrics.render(), "agent_control_test_open")).toBe(5);
  });
});

describe("the agent side's counters", () => {
  it.each([
    ["c-1/node-a/upgrade", "upgrade"],
    ["c-1/node/with/slashes/rollback", "rollback"],
    ["c-1/node-a/confirm", "confirm"],
    ["c-1/node-a/reboot", "other"],
    ["no-slash", "other"],
  ])("names operation %s a(n) %s", (id, kind) => {
    expect(operationKind(id)).toBe(kind);
  });

  it("counts operations sent by kind, reports by phase and refusals by limit", async () => {
    const metrics = new ControlMetrics();
    const hooks = agentMetrics(metrics);
    hooks.sent({ id: "c-1/n-1/upgrade", bytes: new Uint8Array() });
    hooks.sent({ id: "c-1/n-2/upgrade", bytes: new Uint8Array() });
    hooks.refused("max_streams");
    const observed = (phase: OperationPhase) =>
      hooks.onEvent({
        kind: "observed",
        nodeId: "n-1",
        observed: create(ObservedStateSchema, { operationId: "c-1/n-1/upgrade", phase }),
        at: new Date(0),
      });
    observed(OperationPhase.APPLYING);
    observed(OperationPhase.FAILED);
    observed(OperationPhase.FAILED);
    hooks.onEvent({ kind: "disconnected", nodeId: "n-1", sessionId: "s", reason: "gone" });
    const text = await metrics.render();
    expect(sample(text, 'agent_control_operations_sent_total{kind="upgrade"}')).toBe(2);
    expect(sample(text, 'agent_control_operations_sent_total{kind="rollback"}')).toBe(0);
    expect(sample(text, 'agent_control_reports_total{phase="applying"}')).toBe(1);
    expect(sample(text, 'agent_control_reports_total{phase="failed"}')).toBe(2);
    expect(sample(text, 'agent_control_streams_refused_total{reason="max_streams"}')).toBe(1);
    expect(sample(text, 'agent_control_streams_refused_total{reason="max_handshakes"}')).toBe(0);
  });
});

describe("the Agents' trust refusals", () => {
  it("counts REFUSED reports by TUF trust code, and no other refusal", async () => {
    const metrics = new ControlMetrics();
    const hooks = agentMetrics(metrics);
    const refused = (code: string, phase = OperationPhase.REFUSED) =>
      hooks.onEvent({
        kind: "observed",
        nodeId: "n-1",
        observed: create(ObservedStateSchema, { operationId: "c-1/n-1/upgrade", phase, code }),
        at: new Date(0),
      });
    refused("metadata_expired");
    refused("metadata_expired");
    refused("untrusted_release");
    refused("sequence_rollback");
    refused("metadata_expired", OperationPhase.ACCEPTED);
    const text = await metrics.render();
    const series = (code: string) => `agent_control_agent_trust_refusals_total{code="${code}"}`;
    expect(sample(text, series("metadata_expired"))).toBe(2);
    expect(sample(text, series("untrusted_release"))).toBe(1);
    expect(sample(text, series("metadata_unavailable"))).toBe(0);
    expect(sample(text, series("sequence_rollback"))).toBeUndefined();
  });
});

describe("the campaign worker's observer", () => {
  it("counts decisions, their duration, breaches, rollbacks, finished campaigns and leadership", async () => {
    const metrics = new ControlMetrics();
    const observer = campaignMetrics(metrics);
    const breach: CampaignEvent[] = [
      { kind: "breached", batch: 0, failed: 2, offerable: 2, stoppedByNodeId: "n-1" },
      { kind: "rollback_started", batch: 0, cause: "breach" },
      { kind: "phase_changed", from: "running", to: "rolling_back" },
    ];
    observer.decided("committed", 0.02, breach);
    observer.decided("committed", 0.5, [{ kind: "finished", phase: "rolled_back" }]);
    observer.decided("conflict", 0.001, []);
    observer.leading(true);
    let text = await metrics.render();
    expect(sample(text, 'agent_control_campaign_decisions_total{result="committed"}')).toBe(2);
    expect(sample(text, 'agent_control_campaign_decisions_total{result="conflict"}')).toBe(1);
    expect(sample(text, "agent_control_campaign_decision_duration_seconds_count")).toBe(3);
    expect(sample(text, "agent_control_campaign_decision_duration_seconds_sum")).toBeCloseTo(0.521);
    expect(
      sample(text, 'agent_control_campaign_decision_duration_seconds_bucket{le="0.025"}'),
    ).toBe(2);
    expect(sample(text, 'agent_control_campaign_breaches_total{cause="failures"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_breaches_total{cause="gate"}')).toBe(0);
    expect(sample(text, 'agent_control_campaign_rollbacks_total{cause="breach"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_rollbacks_total{cause="abort"}')).toBe(0);
    expect(sample(text, 'agent_control_campaigns_finished_total{phase="rolled_back"}')).toBe(1);
    expect(sample(text, "agent_control_is_leader")).toBe(1);
    observer.leading(false);
    text = await metrics.render();
    expect(sample(text, "agent_control_is_leader")).toBe(0);
  });
});

/** A pool that answers the two fleet queries from fixed rows and counts its queries. */
function fakePool(answer: (sql: string) => unknown[] | Error) {
  const queries: string[] = [];
  const pool = {
    async query(sql: string) {
      queries.push(sql);
      await new Promise((r) => setTimeout(r, 5));
      const rows = answer(sql);
      if (rows instanceof Error) throw rows;
      return { rows };
    },
  };
  return { pool: pool as unknown as pg.Pool, queries };
}

describe("the fleet gauges read at scrape time", () => {
  const campaignRows = [
    {
      id: "c-1",
      phase: "running",
      current_batch: 1,
      changed: 1700000000,
      state: "succeeded",
      nodes: 40,
    },
    {
      id: "c-1",
      phase: "running",
      current_batch: 1,
      changed: 1700000000,
      state: "waiting",
      nodes: 60,
    },
    { id: "c-2", phase: "paused", current_batch: 0, changed: 1700000100, state: null, nodes: 0 },
  ];
  const nodeRows = [
    { online: true, enabled: true, nodes: 90, frozen: 2 },
    { online: false, enabled: true, nodes: 10, frozen: 1 },
  ];

  it("reads the database with two grouped queries per scrape, however many gauges and campaigns", async () => {
    const { pool, queries } = fakePool((sql) =>
      sql.includes("campaigns c") ? campaignRows : nodeRows,
    );
    const metrics = new ControlMetrics();
    fleetGauges(metrics, { pool, log });
    const text = await metrics.render();
    expect(queries).toHaveLength(2);
    expect(sample(text, 'agent_control_campaign_phase{campaign="c-1",phase="running"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_phase{campaign="c-2",phase="paused"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_current_batch{campaign="c-1"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_nodes{campaign="c-1",state="waiting"}')).toBe(60);
    expect(text).not.toMatch(/agent_control_campaign_nodes\{campaign="c-2"/);
    expect(
      sample(text, 'agent_control_campaign_last_change_timestamp_seconds{campaign="c-2"}'),
    ).toBe(1700000100);
    expect(sample(text, 'agent_control_nodes{online="false",enabled="true"}')).toBe(10);
    expect(sample(text, 'agent_control_nodes{online="false",enabled="false"}')).toBe(0);
    expect(sample(text, "agent_control_nodes_trust_frozen")).toBe(3);
    await metrics.render();
    expect(queries).toHaveLength(4);
  });

  it("drops a finished campaign's series at the next scrape", async () => {
    let rows = campaignRows;
    const { pool } = fakePool((sql) => (sql.includes("campaigns c") ? rows : nodeRows));
    const metrics = new ControlMetrics();
    fleetGauges(metrics, { pool, log });
    expect(await metrics.render()).toMatch(/campaign="c-2"/);
    rows = campaignRows.filter((r) => r.id !== "c-2");
    expect(await metrics.render()).not.toMatch(/campaign="c-2"/);
  });

  it("leaves the gauges of a failed query out, counts the failure, and still answers the scrape", async () => {
    const { pool } = fakePool((sql) =>
      sql.includes("campaigns c") ? new Error("connection refused") : nodeRows,
    );
    const metrics = new ControlMetrics();
    fleetGauges(metrics, { pool, log });
    const text = await metrics.render();
    expect(text).not.toMatch(/^agent_control_campaign_phase\{/m);
    expect(sample(text, 'agent_control_metrics_query_failures_total{query="campaigns"}')).toBe(1);
    expect(sample(text, 'agent_control_nodes{online="true",enabled="true"}')).toBe(90);
  });

  it("leaves the node gauge out, not at zero, when its query fails", async () => {
    const { pool } = fakePool((sql) =>
      sql.includes("campaigns c") ? campaignRows : new Error("connection refused"),
    );
    const metrics = new ControlMetrics();
    fleetGauges(metrics, { pool, log });
    const text = await metrics.render();
    expect(text).not.toMatch(/^agent_control_nodes\{/m);
    expect(sample(text, 'agent_control_metrics_query_failures_total{query="nodes"}')).toBe(1);
    expect(sample(text, 'agent_control_campaign_current_batch{campaign="c-1"}')).toBe(1);
  });
});

describe("the leader's campaigns stepped aside", () => {
  it("shows 1 per campaign stepped aside, labelled by the features it lacks, until told otherwise", async () => {
    const metrics = new ControlMetrics();
    const observer = campaignMetrics(metrics);
    observer.steppedAside?.("c-1", ["download_budget"]);
    observer.steppedAside?.("c-2", ["abacus", "teleport"]);
    let text = await metrics.render();
    expect(
      sample(
        text,
        'agent_control_campaign_stepped_aside{campaign="c-1",features="download_budget"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'agent_control_campaign_stepped_aside{campaign="c-2",features="abacus,teleport"}',
      ),
    ).toBe(1);
    observer.steppedAside?.("c-1", undefined);
    text = await metrics.render();
    expect(text).not.toContain('campaign="c-1"');
    expect(text).toContain('campaign="c-2"');
  });
});
