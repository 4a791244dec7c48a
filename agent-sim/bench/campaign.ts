/**
 * Campaign scenarios (fan-out, campaign tick, rollout rate, ack-to-commit). They need the
 * campaign worker and CampaignService; until Control serves them, each row is reported
 * as pending instead of failing the run.
 */
import type { BenchControl } from "./control.js";
import type { BenchRow } from "./rows.js";

/** Inputs of {@link runCampaignScenarios}. */
export interface CampaignScenarioContext {
  readonly control: BenchControl;
  readonly mode: "quick" | "full";
  readonly say: (text: string) => void;
}

/** The campaign rows, measured or pending. */
export async function runCampaignScenarios(ctx: CampaignScenarioContext): Promise<BenchRow[]> {
  ctx.say("campaign scenarios: pending (campaign worker not available)");
  const reason = "pending: campaign worker not available";
  const pending = (scenario: string, n: number, unit: string, goal: string): BenchRow => ({
    scenario,
    n,
    unit,
    project: Number.NaN,
    baseline: Number.NaN,
    baselineName: "",
    ratio: Number.NaN,
    goal,
    met: undefined,
    pending: reason,
  });
  return [
    pending("fan-out: batch start → last offer written", 2500, "ms", "≤ 1 s"),
    pending("fan-out: event-loop delay p99", 2500, "ms", "≤ 100 ms"),
    pending("campaign tick vs raw read + unnest update", 10_000, "ms", "≤ 2×"),
    pending("campaign tick vs raw read + unnest update", 100_000, "ms", "≤ 2×"),
    pending("rollout rate", 10_000, "nodes/min", "≥ 20,000/min"),
    pending("ack-to-commit latency of ObservedState, p50", 10_000, "ms", "vs single-row UPDATE"),
    pending("ack-to-commit latency of ObservedState, p99", 10_000, "ms", "vs single-row UPDATE"),
  ];
}
