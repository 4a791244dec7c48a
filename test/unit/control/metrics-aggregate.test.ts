/**
 * `--workers N`: one scrape answers for the whole process group, each metric aggregated over
 * the workers as its declaration says (docs/operator-guide.md, "Metrics and alerts"). Two
 * registries stand for two workers: one leads, one does not; both hold streams.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../control/log.js";
import {
  agentMetrics,
  aggregateScrapes,
  ControlMetrics,
  campaignMetrics,
  fleetGauges,
} from "../../../control/metrics/index.js";

const log = createLogger({ level: "silent" });

/** The value of the series `series` (name and labels exactly as rendered), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** A pool whose queries answer the fleet of `online` nodes online and one campaign. */
function fleetPool(online: number): pg.Pool {
  return {
    query: async (sql: string) => ({
      rows: /from nodes/.test(sql)
        ? [{ online: true, enabled: true, nodes: online, frozen: 0 }]
        : [
            {
              id: "c-1",
              phase: "running",
              current_batch: 1,
              changed: 1000,
              state: "succeeded",
              nodes: online,
              deferred: 0,
            },
          ],
    }),
  } as unknown as pg.Pool;
}

/** A worker's registry: its streams, its handshakes, whether it leads. */
function worker(o: { leads: boolean; streams: number; welcomed: number; expiry: number }) {
  const metrics = new ControlMetrics();
  const agents = agentMetrics(metrics);
  for (let i = 0; i < o.welcomed; i++) agents.handshake("welcomed");
  const observer = campaignMetrics(metrics);
  observer.leading(o.leads);
  if (o.leads) observer.stalled?.("c-1", true);
  observer.decided("committed", 0.02, []);
  fleetGauges(metrics, { pool: fleetPool(5), log });
  metrics.gauge("agent_control_streams", "Streams.", () => o.streams);
  metrics.gauge("agent_control_streams_limit", "Limit.", () => 100);
  metrics.gauge("agent_control_tuf_offline_expiry_seconds", "Expiry.", () => o.expiry, "min");
  return metrics;
}

describe("one scrape for a process group of workers", () => {
  it("reads is_leader 1 when any worker leads, sums what each worker holds, and takes the fleet gauges once", async () => {
    const leader = worker({ leads: true, streams: 3, welcomed: 3, expiry: 500 });
    const other = worker({ leads: false, streams: 2, welcomed: 4, expiry: 400 });
    const text = await aggregateScrapes([
      await leader.registry.getMetricsAsJSON(),
      await other.registry.getMetricsAsJSON(),
    ]);
    expect(sample(text, "agent_control_is_leader")).toBe(1);
    expect(sample(text, 'agent_control_campaign_stalled{campaign="c-1"}')).toBe(1);
    expect(sample(text, "agent_control_streams")).toBe(5);
    expect(sample(text, "agent_control_streams_limit")).toBe(200);
    expect(sample(text, 'agent_control_handshakes_total{result="welcomed"}')).toBe(7);
    expect(sample(text, 'agent_control_campaign_decisions_total{result="committed"}')).toBe(2);
    expect(sample(text, "agent_control_campaign_decision_duration_seconds_count")).toBe(2);
    expect(
      sample(text, 'agent_control_campaign_decision_duration_seconds_bucket{le="0.025"}'),
    ).toBe(2);
    // Read from the one database by each worker: the same value, never doubled.
    expect(sample(text, 'agent_control_nodes{online="true",enabled="true"}')).toBe(5);
    expect(sample(text, 'agent_control_campaign_nodes{campaign="c-1",state="succeeded"}')).toBe(5);
    expect(sample(text, 'agent_control_campaign_phase{campaign="c-1",phase="running"}')).toBe(1);
    expect(sample(text, "agent_control_tuf_offline_expiry_seconds")).toBe(400);
    expect(text).toMatch(/^agent_control_build_info\{version="[^"]+",node_version="[^"]+"\} 1$/m);
    expect(text.match(/^agent_control_is_leader /gm)).toHaveLength(1);
  });

  it("reads is_leader 0 when no worker leads", async () => {
    const a = worker({ leads: false, streams: 1, welcomed: 1, expiry: 1 });
    const b = worker({ leads: false, streams: 1, welcomed: 1, expiry: 1 });
    const text = await aggregateScrapes([
      await a.registry.getMetricsAsJSON(),
      await b.registry.getMetricsAsJSON(),
    ]);
    expect(sample(text, "agent_control_is_leader")).toBe(0);
  });

  it("renders the group's scrape, not its own, once a group answers for it", async () => {
    const metrics = worker({ leads: false, streams: 1, welcomed: 1, expiry: 1 });
    metrics.answerFor({ scrape: () => Promise.resolve("agent_control_is_leader 1\n") });
    expect(await metrics.render()).toBe("agent_control_is_leader 1\n");
    // A group that cannot answer (its primary is gone): this worker's own view.
    metrics.answerFor({ scrape: () => Promise.resolve(undefined) });
    expect(sample(await metrics.render(), "agent_control_is_leader")).toBe(0);
  });
});
