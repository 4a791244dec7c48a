/**
 * Gauges read from the database at scrape time: the nodes of the registry by online and
 * enabled (and how many report their TUF metadata frozen), and each unfinished campaign's
 * phase, current batch, last change and nodes by state. Two grouped queries per scrape, whatever the fleet's size (no query per node or per
 * campaign), shared by every gauge of one scrape; a failed query leaves its gauges empty for
 * that scrape and counts in `agent_control_metrics_query_failures_total`.
 *
 * These describe the whole fleet, not this Control: every Control of one database exports
 * the same values, so dashboards and alerts aggregate them with `max`, never `sum`, and so
 * does a `--workers` process group's one scrape (each gauge's `aggregator`).
 */
import type pg from "pg";
import { Counter, Gauge } from "prom-client";
import type { Logger } from "../log.js";
import type { ControlMetrics } from "./registry.js";

/** One row of {@link CAMPAIGNS_SQL}: a live campaign and the count of its nodes in one state. */
interface CampaignRow {
  readonly id: string;
  readonly phase: string;
  /** Why it stopped or breached (`CampaignCode`); null while nothing stopped it. */
  readonly code: string | null;
  readonly current_batch: number;
  readonly changed: number;
  /** Null for a campaign without node rows. */
  readonly state: string | null;
  readonly nodes: number;
  /** Of `nodes` (waiting ones), those that answered DEFERRED and wait to be offered again. */
  readonly deferred: number;
}

interface NodesRow {
  readonly online: boolean;
  readonly enabled: boolean;
  readonly nodes: number;
  /** Of those, the nodes whose Agent reports its TUF metadata frozen. */
  readonly frozen?: number;
}

/**
 * Unfinished campaigns only (a partial index holds them), each with its nodes counted by
 * state through the campaign's primary-key prefix: the rows of finished campaigns are never
 * read. (A join grouped by campaign and state made PostgreSQL sort every node row: 0.5–1 s
 * at 100,000 nodes, against about 0.1 s this way on a loaded two-core machine.)
 */
const CAMPAIGNS_SQL = `
  select c.id, c.phase, c.code, c.current_batch, extract(epoch from c.updated_at)::float8 as changed,
         s.state, coalesce(s.nodes, 0) as nodes, coalesce(s.deferred, 0) as deferred
    from campaigns c
    left join lateral (
      select n.state, count(*)::int as nodes,
             (count(*) filter (where n.state = 'waiting' and n.record ? 'deferredAt'))::int as deferred
        from campaign_nodes n
       where n.campaign_id = c.id
       group by n.state
    ) s on true
   where c.finished_at is null`;

const NODES_SQL = `select online, enabled, count(*)::int as nodes,
  count(trust_frozen_since)::int as frozen from nodes group by 1, 2`;

/** Options of {@link fleetGauges}. */
export interface FleetGaugesOptions {
  readonly pool: pg.Pool;
  readonly log: Logger;
}

/** Declares the database-backed gauges in `metrics`. */
export function fleetGauges(metrics: ControlMetrics, o: FleetGaugesOptions): void {
  const registers = [metrics.registry];
  const failures = new Counter({
    name: "agent_control_metrics_query_failures_total",
    help: "Scrapes whose database query for the fleet gauges failed (those gauges were left out).",
    labelNames: ["query"],
    registers,
    // Read after this scrape's queries, so a failure shows in the scrape it emptied.
    async collect() {
      await Promise.all([campaigns(), nodes()]);
    },
  });
  for (const query of ["campaigns", "nodes"]) failures.inc({ query }, 0);
  const campaigns = shared(async () => {
    try {
      return (await o.pool.query<CampaignRow>(CAMPAIGNS_SQL)).rows;
    } catch (error) {
      failures.inc({ query: "campaigns" });
      o.log.warn({ err: (error as Error).message }, "metrics: could not read the campaigns");
      return undefined;
    }
  });
  const nodes = shared(async () => {
    try {
      return (await o.pool.query<NodesRow>(NODES_SQL)).rows;
    } catch (error) {
      failures.inc({ query: "nodes" });
      o.log.warn({ err: (error as Error).message }, "metrics: could not read the nodes");
      return undefined;
    }
  });

  new Gauge({
    name: "agent_control_nodes",
    help: "Nodes in the registry, by online (a stream on some Control) and enabled. The same on every Control.",
    labelNames: ["online", "enabled"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = await nodes();
      this.reset();
      // Left out, not zero, when the query failed: a zero would read as every node offline.
      if (rows === undefined) return;
      for (const online of ["true", "false"]) {
        for (const enabled of ["true", "false"]) this.set({ online, enabled }, 0);
      }
      for (const r of rows) {
        this.set({ online: String(r.online), enabled: String(r.enabled) }, r.nodes);
      }
    },
  });
  new Gauge({
    name: "agent_control_nodes_trust_frozen",
    help: "Nodes whose Agent reports its TUF metadata frozen (expired, and no fresh metadata could be fetched): they refuse every new release. The same on every Control.",
    aggregator: "max",
    registers,
    async collect() {
      const rows = await nodes();
      this.reset();
      if (rows === undefined) return;
      this.set(rows.reduce((sum, r) => sum + (r.frozen ?? 0), 0));
    },
  });
  new Gauge({
    name: "agent_control_campaign_phase",
    help: "1 for the phase each unfinished campaign is in (running, paused, rolling_back, …).",
    labelNames: ["campaign", "phase"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      for (const r of rows) this.set({ campaign: r.id, phase: r.phase }, 1);
    },
  });
  new Gauge({
    name: "agent_control_campaign_breached",
    help: "1 for each unfinished campaign a breach stopped (its code: batch_failed, max_failures_exceeded, min_canaries_unmet, release_yanked), whether it then rolls back, pauses or resumed; an operator's pause or abort is no breach.",
    labelNames: ["campaign", "code"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      for (const r of rows) {
        if (r.code !== null && r.code !== "aborted") this.set({ campaign: r.id, code: r.code }, 1);
      }
    },
  });
  new Gauge({
    name: "agent_control_campaign_current_batch",
    help: "The index (from 0) of the batch each unfinished campaign is on.",
    labelNames: ["campaign"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      for (const r of rows) this.set({ campaign: r.id }, r.current_batch);
    },
  });
  new Gauge({
    name: "agent_control_campaign_last_change_timestamp_seconds",
    help: "When each unfinished campaign's decision last wrote a change (a node's state, a batch, a phase, a command), in Unix seconds.",
    labelNames: ["campaign"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      for (const r of rows) this.set({ campaign: r.id }, r.changed);
    },
  });
  new Gauge({
    name: "agent_control_campaign_nodes",
    help: "The nodes of each unfinished campaign, by node state (waiting, offered, applying, …, succeeded, failed).",
    labelNames: ["campaign", "state"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      for (const r of rows)
        if (r.state !== null) this.set({ campaign: r.id, state: r.state }, r.nodes);
    },
  });
  new Gauge({
    name: "agent_control_campaign_deferred_nodes",
    help: "Waiting nodes of each unfinished campaign that answered DEFERRED (busy) and wait to be offered again.",
    labelNames: ["campaign"],
    aggregator: "max",
    registers,
    async collect() {
      const rows = (await campaigns()) ?? [];
      this.reset();
      const byCampaign = new Map<string, number>();
      for (const r of rows) byCampaign.set(r.id, (byCampaign.get(r.id) ?? 0) + r.deferred);
      for (const [campaign, count] of byCampaign) this.set({ campaign }, count);
    },
  });
}

/**
 * `load` shared by every caller while a call is in flight: the gauges of one scrape are
 * collected together and so read the database once.
 */
function shared<T>(load: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    inFlight ??= load().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
