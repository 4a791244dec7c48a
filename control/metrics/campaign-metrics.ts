/**
 * The campaign worker's metrics, fed by its {@link WorkerObserver}: decisions by result and
 * their duration, breaches, rollbacks, campaigns finished, campaigns stalled past their
 * progress deadline, campaigns stepped aside from (engine features this Control does not know),
 * and whether this Control leads.
 * The pure engine knows nothing of them: they are read off the events a decision committed.
 */

import { Gauge, Histogram } from "prom-client";
import type { CampaignEvent } from "../campaign/index.js";
import type { WorkerObserver } from "../campaign-worker/observer.js";
import type { ControlMetrics } from "./registry.js";

/** Decision durations: a few milliseconds for a small campaign, seconds at 100,000 nodes. */
const DECISION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Declares the worker's metrics in `metrics` and returns the observer that feeds them. */
export function campaignMetrics(metrics: ControlMetrics): WorkerObserver {
  const registers = [metrics.registry];
  const decisions = metrics.counter(
    "agent_control_campaign_decisions_total",
    "Campaign decisions by result: committed, conflict (decided again), not_leader (lease lost), failed (retried).",
    ["result"],
    [{ result: "committed" }, { result: "failed" }],
  );
  const duration = new Histogram({
    name: "agent_control_campaign_decision_duration_seconds",
    help: "Time one campaign decision took: reading, deciding and the committed write.",
    buckets: DECISION_BUCKETS,
    registers,
  });
  const breaches = metrics.counter(
    "agent_control_campaign_breaches_total",
    "Batches that breached, by cause: failures (failed nodes reached the threshold) or gate (a health gate failed).",
    ["cause"],
    [{ cause: "failures" }, { cause: "gate" }],
  );
  const rollbacks = metrics.counter(
    "agent_control_campaign_rollbacks_total",
    "Rollbacks started, by cause: breach or abort.",
    ["cause"],
    [{ cause: "breach" }, { cause: "abort" }],
  );
  const finished = metrics.counter(
    "agent_control_campaigns_finished_total",
    "Campaigns that finished, by final phase.",
    ["phase"],
    [{ phase: "completed" }, { phase: "rolled_back" }, { phase: "aborted" }, { phase: "failed" }],
  );
  const halts = metrics.counter(
    "agent_control_convergence_halts_total",
    "Desired versions whose convergence a burst of failed nodes halted (see the audit log's convergence.halt).",
  );
  const leader = new Gauge({
    name: "agent_control_is_leader",
    help: "1 while this Control holds the campaign leader lease (decides campaigns), else 0.",
    // A process group leads when any of its workers does.
    aggregator: "max",
    registers,
  });
  leader.set(0);
  const stalled = new Gauge({
    name: "agent_control_campaign_stalled",
    help: "1 for each live campaign past its progress deadline (no node or batch change); its series goes when it progresses or finishes. Only the leader reports.",
    labelNames: ["campaign"],
    aggregator: "max",
    registers,
  });
  const aside = new Gauge({
    name: "agent_control_campaign_stepped_aside",
    help: "1 for each live campaign this leader steps aside from: it uses engine features this Control does not know (label features), so a Control of a newer release must lead it; its series goes when it finishes or this Control stops leading. Only the leader reports.",
    labelNames: ["campaign", "features"],
    aggregator: "max",
    registers,
  });
  const asideFeatures = new Map<string, string>();
  const count = (event: CampaignEvent) => {
    switch (event.kind) {
      case "breached":
        breaches.inc({ cause: event.gate === undefined ? "failures" : "gate" });
        return;
      case "rollback_started":
        rollbacks.inc({ cause: event.cause });
        return;
      case "finished":
        finished.inc({ phase: event.phase });
        return;
      default:
        // Phase changes, batches and commands are the audit log's; no counter needs them.
        return;
    }
  };
  return {
    decided(result, seconds, events) {
      decisions.inc({ result });
      duration.observe(seconds);
      for (const event of events) count(event);
    },
    leading(leading) {
      leader.set(leading ? 1 : 0);
    },
    convergenceHalted() {
      halts.inc();
    },
    stalled(campaignId, now) {
      // Labelled by campaign only while stalled: at most the live campaigns, never a history.
      if (now) stalled.set({ campaign: campaignId }, 1);
      else stalled.remove({ campaign: campaignId });
    },
    steppedAside(campaignId, features) {
      const before = asideFeatures.get(campaignId);
      if (before !== undefined) aside.remove({ campaign: campaignId, features: before });
      asideFeatures.delete(campaignId);
      if (features === undefined) return;
      const label = features.join(",");
      asideFeatures.set(campaignId, label);
      aside.set({ campaign: campaignId, features: label }, 1);
    },
  };
}
